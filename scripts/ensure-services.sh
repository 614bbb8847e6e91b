#!/usr/bin/env bash
# Make sure the Redis and PostgreSQL the tests use are up on 127.0.0.1; start them when they are not.
set -u
if ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  echo "starting redis-server on 127.0.0.1:6379"
  if ! command -v redis-server >/dev/null; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; fi
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && break; sleep 0.1; done
fi
if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
  echo "starting PostgreSQL on 127.0.0.1:5432"
  if ! command -v pg_ctlcluster >/dev/null; then apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; fi
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && break; sleep 0.1; done
fi
exit 0
