/** The collection queue: one BullMQ job per JobTask, its id the job_task_id (adding it twice is a no-op). */
export const COLLECT_QUEUE = 'cost-analysis-collect';

export interface CollectTaskData {
  domain_id: string;
  job_task_id: string;
}
