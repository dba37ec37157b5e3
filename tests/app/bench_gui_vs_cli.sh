#!/bin/bash
# Benchmark (not a test): generation speed in the desktop app against magnetar-cli on the same
# model, prompt, token count and greedy sampling. Runs come in pairs whose order alternates
# (cli first, then gui first, ...) so drift on the machine falls on both sides; the result is the
# median of the per-pair ratios gui/cli, with both medians. The GUI number is the app's own
# per-message statistic read from the saved conversation; the CLI's is its "generated" line.
# Each GUI run also reports the UI's frame times during generation (MAGNETAR_FRAME_STATS: frames,
# fps, per-frame UI-thread CPU p50/p95/max, the UI thread's CPU share) and, on the private Xvfb,
# the X server's CPU seconds over the run (drawing costs it too, outside the app's process).
#
#   bench_gui_vs_cli.sh MAGNETAR MAGNETAR_CLI MODEL.mgn [PAIRS=5] [TOKENS=200]
#
# Uses a private Xvfb display and Mesa's software OpenGL unless DISPLAY_FOR_BENCH names a
# real display. Run it on a quiet machine: other load shows up as noise in the ratios.
set -u
MAGNETAR=$1 CLI=$2 MODEL=$3 PAIRS=${4:-5} TOKENS=${5:-200}
PY=/usr/bin/python3
PROMPT="Once upon a time"
WORK=$(mktemp -d /tmp/magnetar-bench.XXXXXX)
XVFB_PID= APP_PID=
trap '[ -n "$APP_PID" ] && kill $APP_PID 2>/dev/null; [ -n "$XVFB_PID" ] && kill $XVFB_PID 2>/dev/null; rm -rf "$WORK"' EXIT
if [ -n "${DISPLAY_FOR_BENCH:-}" ]; then
  export DISPLAY=$DISPLAY_FOR_BENCH
else
  for n in $(seq $((300 + $$ % 100)) 499); do [ -e /tmp/.X11-unix/X$n ] || { N=$n; break; }; done
  Xvfb :$N -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 & XVFB_PID=$!
  export DISPLAY=:$N LIBGL_ALWAYS_SOFTWARE=1
  sleep 1
fi
# The app measures the machine's bandwidth on first start (seconds of full load): reuse the
# cached result, or let a first start without a model measure it before anything is timed.
export XDG_CACHE_HOME=$WORK/cache
mkdir -p "$XDG_CACHE_HOME/magnetar"
cached=${HOME:-/nonexistent}/.cache/magnetar/bandwidth.json
if [ -f "$cached" ]; then
  cp "$cached" "$XDG_CACHE_HOME/magnetar/"
else
  XDG_DATA_HOME=$WORK/warmup "$MAGNETAR" >/dev/null 2>&1 & APP_PID=$!
  for _ in $(seq 600); do [ -s "$XDG_CACHE_HOME/magnetar/bandwidth.json" ] && break; sleep 0.1; done
  kill $APP_PID 2>/dev/null; wait $APP_PID 2>/dev/null; APP_PID=
fi

cpu_seconds() {  # utime + stime of a process, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0
}

run_cli() {  # prints "tok/s tokens"
  "$CLI" run -m "$MODEL" -p "$PROMPT" -n "$TOKENS" --temp 0 --no-stop 2>&1 |
    grep -o 'generated [0-9]* tok, [0-9.]* tok/s' | awk '{print $4, $2}'
}

run_gui() {  # $1 = run number; prints "tok/s tokens xvfb_cpu_seconds"; frame stats in $WORK/frames$1.jsonl
  local data=$WORK/data$1 frames=$WORK/frames$1.jsonl
  mkdir -p "$data/magnetar"
  echo "{\"format_version\":1,\"sampling\":{\"temperature\":0,\"max_tokens\":$TOKENS}}" >"$data/magnetar/settings.json"
  MAGNETAR_FRAME_STATS=$frames XDG_DATA_HOME=$data "$MAGNETAR" "$MODEL" >"$WORK/app$1.log" 2>&1 & APP_PID=$!
  for _ in $(seq 600); do xdotool search --name '^Magnetar — ' >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  local wid x0
  wid=$(xdotool search --name '^Magnetar — ' | head -1)
  xdotool mousemove --window "$wid" 600 790 click 1; sleep 0.3
  xdotool type --delay 30 "$PROMPT"
  x0=$([ -n "$XVFB_PID" ] && cpu_seconds "$XVFB_PID" || echo 0)
  xdotool keydown Return; sleep 0.25; xdotool keyup Return
  # The app appends its frame statistics when the answer is done; a cheap file test, so that
  # polling does not take CPU from the run it measures.
  for _ in $(seq 6000); do [ -s "$frames" ] && break; sleep 0.2; done
  local x1
  x1=$([ -n "$XVFB_PID" ] && cpu_seconds "$XVFB_PID" || echo 0)
  local gui
  gui=$($PY -c "
import glob, json
for f in glob.glob('$data/magnetar/conversations/*.json'):
    m = json.load(open(f))['messages']
    if len(m) == 2 and m[1].get('stats'):
        s = m[1]['stats']; print('%.3f %d' % (s['generate_tokens_per_second'], s['generated_tokens']))
" 2>/dev/null)
  kill $APP_PID 2>/dev/null; wait $APP_PID 2>/dev/null; APP_PID=
  echo "$gui $(awk "BEGIN {printf \"%.2f\", $x1 - $x0}")"
}

ratios=() cli_runs=() gui_runs=()
for run in $(seq "$PAIRS"); do
  if [ $((run % 2)) -eq 1 ]; then cli=$(run_cli); gui=$(run_gui "$run")
  else gui=$(run_gui "$run"); cli=$(run_cli); fi
  read -r ct cn <<<"$cli"
  read -r gt gn xcpu <<<"$gui"
  if [ -z "${ct:-}" ] || [ -z "${gt:-}" ]; then echo "run $run: failed (cli '$cli', gui '$gui')"; continue; fi
  cli_runs+=("$ct") gui_runs+=("$gt")
  ratios+=("$(awk "BEGIN {printf \"%.4f\", $gt / $ct}")")
  frames=$($PY -c "
import json; s = json.loads(open('$WORK/frames$run.jsonl').readline())
print('%d frames %.1f fps, UI CPU/frame p50 %.1f p95 %.1f max %.1f ms, UI thread %.2f%% of a core' % (
    s['frames'], s['fps'], s['cpu_ms']['p50'], s['cpu_ms']['p95'], s['cpu_ms']['max'], 100 * s['ui_cpu_share']))" 2>/dev/null)
  echo "pair $run: cli $ct tok/s ($cn tok), gui $gt tok/s ($gn tok), gui/cli ${ratios[-1]}; $frames; Xvfb ${xcpu} s CPU"
done
[ ${#ratios[@]} -gt 0 ] || { echo "no successful pair"; exit 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median of ${#ratios[@]} pairs: gui/cli = $(median "${ratios[@]}") (cli $(median "${cli_runs[@]}") tok/s, gui $(median "${gui_runs[@]}") tok/s)"
cat "$WORK"/frames*.jsonl | $PY -c "
import json, statistics, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
if runs:
    med = lambda k, sub=None: statistics.median(r[k][sub] if sub else r[k] for r in runs)
    print('UI frame times during generation (median over runs): %.1f fps, UI-thread CPU per frame p50 %.1f ms, '
          'p95 %.1f ms, worst %.1f ms; wall per frame p50 %.1f ms; UI thread %.2f%% of one core' % (
          med('fps'), med('cpu_ms', 'p50'), med('cpu_ms', 'p95'), max(r['cpu_ms']['max'] for r in runs),
          med('wall_ms', 'p50'), 100 * med('ui_cpu_share')))"
