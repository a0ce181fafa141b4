-- upstream's Job.synced_accounts: the accounts a plugin's get_tasks said it syncs (TasksInfo.synced_accounts)
ALTER TABLE "job" ADD COLUMN "synced_accounts" JSONB NOT NULL DEFAULT '[]';
