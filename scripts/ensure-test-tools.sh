#!/bin/sh
# The browser tests drive Debian's Chromium; install it when it is missing and
# we may (root with apt). Never lets a tool download a browser of its own.
set -e
# CHROMIUM_PATH names another browser (e.g. Chrome on a Mac): use it, install nothing.
if [ -n "${CHROMIUM_PATH:-}" ]; then
  if [ -x "$CHROMIUM_PATH" ]; then exit 0; fi
  echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable browser" >&2
  exit 1
fi
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "The browser tests need Debian's chromium at /usr/bin/chromium: sudo apt-get install chromium" >&2
exit 1
