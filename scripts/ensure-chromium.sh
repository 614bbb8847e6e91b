#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (a test tool's own browser download does not work offline).
set -eu
if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
