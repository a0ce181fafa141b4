#!/bin/sh
# publish-plugins --name N --hostname H [--public]: the publish runner of a plugin supervisor (README
# "Plugins"). Logs in as PLATFORM_USER_ID (a DOMAIN_ADMIN of PLATFORM_DOMAIN_ID; password in
# PLATFORM_PASSWORD) at PLATFORM_ENDPOINT, then publishes every `ID@VERSION=grpc://host:port` of
# $PLUGINS (space-separated) as the supervisor's whole list; its secret in PLATFORM_SUPERVISOR_SECRET.
# Secrets come from the environment only, never a flag (a flag shows in `ps`).
set -eu
: "${PLATFORM_ENDPOINT:?}" "${PLATFORM_DOMAIN_ID:?}" "${PLATFORM_USER_ID:?}" "${PLATFORM_PASSWORD:?}" "${PLATFORM_SUPERVISOR_SECRET:?}" "${PLUGINS:?}"
platformctl login --endpoint "$PLATFORM_ENDPOINT" --domain-id "$PLATFORM_DOMAIN_ID" --user-id "$PLATFORM_USER_ID"
for p in $PLUGINS; do set -- "$@" --plugin "$p"; done
exec platformctl publish-supervisor "$@"
