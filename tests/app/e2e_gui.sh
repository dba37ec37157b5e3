#!/bin/bash
# End-to-end test of the desktop app under Xvfb with Mesa's software OpenGL.
#
#   e2e_gui.sh MAGNETAR MAGNETAR_CLI XDND_DROP TESTDATA_DIR ARTIFACT_DIR
#
# Run 1: converts stories260K with magnetar-cli, starts `magnetar MODEL`, types a prompt with
#        xdotool, waits for the streamed reply, checks the conversation JSON on disk, then Ctrl+N
#        and a second prompt typed over two lines (Shift+Enter), then selects part of that answer
#        in its selectable view, copies it and sends it in a third chat. (Stopping is covered by
#        the headless bridge and AppState tests: stories260K answers in a fraction of a second,
#        before Esc could land.)
# Run 2: starts the app with no model, drops the Hugging Face folder onto the window with
#        xdnd_drop (xdotool cannot drag), accepts the conversion with Enter, and checks the
#        converted file is written and loaded. A folder without config.json is dropped too: the
#        app must say so and keep its model.
# Run 3: today's architectures, dropped onto the same window: a Qwen 3 folder (tokenizer.json,
#        Jinja chat template) and a GGUF file (K-quant Llama); each is converted, loaded and
#        chatted with.
# Input is sent as quick taps with no pauses: the app queues input and hands it to ImGui a
# frame's worth at a time (core/input_trickle.h), so a tap that begins and ends between two slow
# frames (a loaded machine) is still seen, in order. What the test waits for is an effect on
# disk or in the window title, polled with a bounded wait — never a fixed sleep before a key.
# Screenshots of each step go to ARTIFACT_DIR. Exit 77 (skipped) without Xvfb/xdotool/test data,
# exit 1 instead under CI=true or MAGNETAR_REQUIRE_TESTDATA=1.
set -u
MAGNETAR=$1 CLI=$2 XDND=$3 TESTDATA=${MAGNETAR_TESTDATA:-$4} OUT=$5
PY=/usr/bin/python3
# In CI (CI=true) or with MAGNETAR_REQUIRE_TESTDATA=1 a missing tool or test data fails the test:
# .ci/run installs both, so a skip there would hide a broken setup.
skip_or_fail() {
  if [ "${CI:-}" = true ] || [ "${MAGNETAR_REQUIRE_TESTDATA:-}" = 1 ]; then
    echo "FAIL: $1 (CI=true / MAGNETAR_REQUIRE_TESTDATA=1 require it)"; exit 1
  fi
  echo "SKIP: $1"; exit 77
}
for tool in Xvfb xdotool import; do
  command -v $tool >/dev/null || skip_or_fail "$tool not installed"
done
for data in stories260K-hf/f32 models/tiny-qwen3 gguf-kquants/tiny-llama-Q4_K_M.gguf; do
  [ -e "$TESTDATA/$data" ] || skip_or_fail "no $data in the test data at $TESTDATA"
done
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/magnetar-e2e.XXXXXX)
APP_PID= XVFB_PID=
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -n "${DISPLAY:-}" ] && import -window root "$OUT/failure.png" 2>/dev/null; \
         echo "--- app log"; cat "$WORK"/app*.log 2>/dev/null; exit 1; }

# A display number nobody uses.
for n in $(seq $((100 + $$ % 100)) 299); do
  [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { DISPLAY_NUMBER=$n; break; }
done
Xvfb :$DISPLAY_NUMBER -screen 0 1400x900x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
XVFB_PID=$!
export DISPLAY=:$DISPLAY_NUMBER LIBGL_ALWAYS_SOFTWARE=1 XDG_CACHE_HOME=$WORK/cache
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done

# Keys go straight to the window (xdotool's --window: XSendEvent). Through XTest they would go
# wherever the X server's focus is; with no window manager, keys typed right after a window
# appears or after the pointer moved were seen to arrive late or not at all.
key() { xdotool key --window "$WID" "$@"; }  # taps: ctrl+n, shift+Return, Return
type_text() { xdotool type --window "$WID" --delay 20 "$1"; }
click_input() { xdotool mousemove --window "$WID" 600 790 click 1; }  # the message box
# Waits until a window whose title matches $1 exists; prints its id.
wait_window() {
  for _ in $(seq ${2:-600}); do
    id=$(xdotool search --name "$1" 2>/dev/null | head -1)
    [ -n "$id" ] && { echo "$id"; return 0; }
    sleep 0.1
  done
  return 1
}
# Waits up to $2 seconds until the Python expression $3 holds for `chats`, the conversations
# saved in $1 (each as parsed JSON).
wait_chats() {
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt $deadline ]; do
    $PY - "$1" "$3" <<'PYEOF' && return 0
import glob, json, sys
chats = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]  # written by rename: whole
sys.exit(0 if eval(sys.argv[2]) else 1)
PYEOF
    sleep 0.1
  done
  return 1
}
answered() { echo "len(c['messages']) == 2 and bool(c['messages'][1].get('stats'))"; }  # about chat c
start_app() {  # data dir, log name, args...
  local data=$1 log=$2; shift 2
  XDG_DATA_HOME=$data "$MAGNETAR" "$@" >"$WORK/$log" 2>&1 &
  APP_PID=$!
}
stop_app() { kill "$APP_PID" 2>/dev/null; wait "$APP_PID" 2>/dev/null; APP_PID=; }
# Ctrl+N, and the new chat it saves: an empty "New chat". Pressed again if it has not appeared
# after a while (a second Ctrl+N keeps an empty chat: nothing piles up), a bounded number of times.
new_chat() {
  for _ in 1 2 3 4; do
    key ctrl+n
    wait_chats "$1" 20 "any(c['title'] == 'New chat' and not c['messages'] for c in chats)" && return 0
  done
  fail "Ctrl+N made no new chat"
}
# A dropped source's dialog takes Enter once it has read the source: Enter is pressed until the
# conversion has begun (its file appears in $MODELS), a bounded number of times.
accept_conversion() {  # converted file name prefix
  for _ in $(seq 60); do
    key Return
    for _ in $(seq 5); do
      ls "$MODELS" 2>/dev/null | grep -q "^$1" && return 0
      sleep 0.1
    done
  done
  fail "Enter did not start the conversion to $1*"
}

# ---- Run 1: chat with a model given on the command line ---------------------------------------
MODEL=$WORK/stories260K-f16.mgn
"$CLI" convert "$TESTDATA/stories260K-hf/f32" "$MODEL" >"$WORK/convert.log" 2>&1 || fail "magnetar-cli convert"
start_app "$WORK/data1" app1.log "$MODEL"
WID=$(wait_window '^Magnetar — stories260K-f16.mgn$' 900) || fail "the model did not load (window title)"
CHATS=$WORK/data1/magnetar/conversations
click_input
type_text "Once upon a time"
key Return
# The reply streams in; it is on disk, with statistics, once the answer is done.
wait_chats "$CHATS" 120 "len(chats) == 1 and all($(answered) for c in chats)" || fail "no saved reply to the first prompt"
import -window root "$OUT/e2e_chat.png"
$PY - "$CHATS" <<'PYEOF' || fail "conversation file check"
import glob, json, sys
c = json.load(open(glob.glob(sys.argv[1] + "/*.json")[0]))
assert c["format"] == "magnetar-conversation" and c["format_version"] == 1, c
m = c["messages"]
assert m[0] == {**m[0], "role": "user", "content": "Once upon a time"}, m[0]
assert m[1]["role"] == "assistant" and len(m[1]["content"]) > 20, m[1]
s = m[1]["stats"]
assert s["generated_tokens"] > 0 and s["generate_tokens_per_second"] > 0, s
assert c["title"] == "Once upon a time" and c["model_path"].endswith("stories260K-f16.mgn"), c
print("run 1: reply of %d tokens at %.1f tok/s saved (%s)" % (s["generated_tokens"], s["generate_tokens_per_second"], s["stop_reason"]))
PYEOF

# A new chat (the first answer filled stories260K's 512-token context) and a two-line prompt.
new_chat "$CHATS"
click_input
type_text "Tell me about a cat"
key shift+Return  # a newline, not a send
type_text "and a dog"
key Return
wait_chats "$CHATS" 120 "any(c['title'].startswith('Tell me about a cat') and $(answered) for c in chats)" ||
  fail "no saved reply to the second prompt"
$PY - "$CHATS" <<'PYEOF' || fail "second chat check"
import glob, json, sys
chats = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
assert len(chats) == 2, [c["title"] for c in chats]
cat = [c for c in chats if c["title"] == "Tell me about a cat"][0]
assert cat["messages"][0]["content"] == "Tell me about a cat\nand a dog", cat["messages"][0]
s = cat["messages"][1]["stats"]
print("run 1: second chat saved; its answer ended by '%s' after %d tokens" % (s["stop_reason"], s["generated_tokens"]))
assert s["generated_tokens"] > 0 and s["stop_reason"], s
PYEOF
import -window root "$OUT/e2e_second_chat.png"

# Part of an answer, selected and copied: double-click the answer (selectable view), drag across
# wrapped lines, Ctrl+C, paste into a new chat and send it. The message must be a piece of the
# answer exactly as stored: the view's soft line breaks must not be copied. The two clicks go out
# 1 ms apart: the app times a double-click as GLFW delivers the presses, and on a loaded machine
# a frame drawn between two deliveries can stretch 80 ms into more than the 0.5 s allowed.
xdotool mousemove --window "$WID" 600 300 click --repeat 2 --delay 1 1
xdotool mousemove --window "$WID" 420 266 mousedown 1
xdotool mousemove --window "$WID" 560 281
xdotool mousemove --window "$WID" 700 298
xdotool mouseup 1
import -window root "$OUT/e2e_selection.png"
key ctrl+c
new_chat "$CHATS"
click_input
key ctrl+v
key Return
wait_chats "$CHATS" 60 "len(chats) == 3 and all(c['messages'] for c in chats)" || fail "the pasted text was not sent"
$PY - "$CHATS" <<'PYEOF' || fail "selection copy check"
import glob, json, sys
chats = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
cat = [c for c in chats if c["title"] == "Tell me about a cat"][0]
answer = cat["messages"][1]["content"]
pasted = [c for c in chats if c is not cat and c["title"] != "Once upon a time"]
assert len(pasted) == 1 and pasted[0]["messages"], [c["title"] for c in chats]
text = pasted[0]["messages"][0]["content"]
assert len(text) > 40, repr(text)
assert text in answer, "copied %r is not a piece of the answer" % text
print("run 1: selected and copied %d characters of the answer, spaces and line breaks as stored" % len(text))
PYEOF
stop_app

# ---- Run 2: drop a Hugging Face folder onto a window with no model -----------------------------
start_app "$WORK/data2" app2.log
WID=$(wait_window '^Magnetar$') || fail "no window"
CHATS=$WORK/data2/magnetar/conversations
MODELS=$WORK/data2/magnetar/models
sleep 1  # for the screenshot only: the welcome screen drawn
import -window root "$OUT/e2e_welcome.png"
"$XDND" "$WID" "$TESTDATA/stories260K-hf/f32" || fail "XDND drop"
sleep 1  # for the screenshot only: Enter below is pressed until it takes
import -window root "$OUT/e2e_drop_dialog.png"
accept_conversion stories260K-hf-f32-f16  # "Convert and load"
CONVERTED=$MODELS/stories260K-hf-f32-f16.mgn
wait_window '^Magnetar — stories260K-hf-f32-f16.mgn$' 900 >/dev/null || fail "the dropped folder was not converted and loaded"
[ -s "$CONVERTED" ] || fail "no converted file at $CONVERTED"
import -window root "$OUT/e2e_after_drop.png"
$PY - "$WORK/data2/magnetar/settings.json" "$CONVERTED" <<'PYEOF' || fail "settings check"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["known_models"][0] == sys.argv[2], s
print("run 2: folder converted to %s and loaded" % sys.argv[2].rsplit("/", 1)[1])
PYEOF

# A folder that is not a model: a message in the window, the model stays loaded.
mkdir -p "$WORK/holiday photos"
"$XDND" "$WID" "$WORK/holiday photos" || fail "XDND drop of a plain folder"
sleep 1  # nothing may change: give a wrong reaction the time to show
import -window root "$OUT/e2e_bad_drop.png"
xdotool search --name '^Magnetar — stories260K-hf-f32-f16.mgn$' >/dev/null || fail "a bad drop changed the loaded model"

# ---- Run 3: today's architectures, dropped onto the same window ---------------------------------
# Random weights write gibberish, so the checks are: the window names the new model, and a
# non-empty reply from that model is saved in a chat of its own.
drop_convert_and_chat() {  # source, converted file name prefix, prompt, screenshot
  local source=$1 stem=$2 prompt=$3 shot=$4
  "$XDND" "$WID" "$source" || fail "XDND drop of $source"
  accept_conversion "$stem"
  wait_window "^Magnetar — $stem.*\\.mgn\$" 1200 >/dev/null || fail "$source was not converted and loaded"
  local converted
  converted=$MODELS/$(ls "$MODELS" | grep "^$stem.*\\.mgn$" | head -1)
  [ -s "$converted" ] || fail "no converted file for $source in $MODELS"
  new_chat "$CHATS"  # a chat of this model's own
  click_input
  type_text "$prompt"
  key Return
  wait_chats "$CHATS" 120 "any(c['model_path'] == '$converted' and $(answered) for c in chats)" ||
    fail "no saved reply from $converted"
  sleep 1  # for the screenshot only: the last frame of the answer drawn
  import -window root "$OUT/$shot"
  $PY - "$CHATS" "$converted" "$prompt" <<'PYEOF' || fail "chat with $converted"
import glob, json, sys
chats = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
mine = [c for c in chats if c["model_path"] == sys.argv[2]]
assert len(mine) == 1, [(c["title"], c["model_path"]) for c in chats]
m = mine[0]["messages"]
assert len(m) == 2 and m[0]["role"] == "user" and m[0]["content"] == sys.argv[3], m
assert m[1]["role"] == "assistant" and m[1]["content"].strip(), m[1]
s = m[1]["stats"]
assert s["generated_tokens"] > 0 and s["prompt_tokens"] > 0 and s["stop_reason"], s
print("run 3: %s answered %d tokens (prompt %d tokens, %s)" % (sys.argv[2].rsplit("/", 1)[1], s["generated_tokens"],
                                                             s["prompt_tokens"], s["stop_reason"]))
PYEOF
}
drop_convert_and_chat "$TESTDATA/models/tiny-qwen3" tiny-qwen3- "Hello, who are you?" e2e_qwen3_chat.png
drop_convert_and_chat "$TESTDATA/gguf-kquants/tiny-llama-Q4_K_M.gguf" tiny-llama-Q4_K_M- \
  "Once upon a time" e2e_gguf_chat.png
stop_app
echo "PASS: screenshots in $OUT"
