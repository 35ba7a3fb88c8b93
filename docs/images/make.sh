#!/usr/bin/env bash
# The pictures of the README and the docs, made from the golden session:
# an exported HTML page and a PDF page, and serve's pages from a real
# `vis-export serve` on a free port of 127.0.0.1, stopped afterwards.
# Needs vis-export with [pdf,serve], headless Chromium and poppler.
# Run from anywhere: bash docs/images/make.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
images="$root/docs/images"
work="$(mktemp -d)"
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
shot() {  # URL FILE WIDTH HEIGHT
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$3,$4" \
        --screenshot="$2" "$1" 2>/dev/null
}
vis-export convert "$root/golden/input/session.json" --to html -o "$work/session.html"
shot "file://$work/session.html" "$images/page.png" 1100 900
vis-export convert "$root/golden/input/session.json" --to pdf -o "$work/session.pdf"
pdftoppm -png -r 60 -f 1 -l 1 -singlefile "$work/session.pdf" "$images/pdf-page"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
vis-export serve "$root/golden/input" --host 127.0.0.1 --port "$port" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q Serving "$work/serve.log" && break; sleep 0.2; done
shot "http://127.0.0.1:$port/" "$images/serve-list.png" 1100 450
shot "http://127.0.0.1:$port/s/golden_session" "$images/serve-session.png" 1100 700
shot "http://127.0.0.1:$port/search?q=parse_config" "$images/serve-search.png" 1100 700
ls -l "$images"
