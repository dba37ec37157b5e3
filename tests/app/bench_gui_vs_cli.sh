#!/bin/bash
# Benchmark (not a test): generation speed in the desktop app against magnetar-cli on the same
# model, prompt and greedy sampling, alternating runs; prints each run and the medians. The GUI
# number is the app's own per-message statistic read from the saved conversation.
#
#   bench_gui_vs_cli.sh MAGNETAR MAGNETAR_CLI MODEL.mgn [RUNS=3] [TOKENS=400]
#
# Uses a private Xvfb display and Mesa's software OpenGL unless DISPLAY_FOR_BENCH names a
# real display (the fair comparison: a GPU draws the frames there).
set -u
MAGNETAR=$1 CLI=$2 MODEL=$3 RUNS=${4:-3} TOKENS=${5:-400}
PY=/usr/bin/python3
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
export XDG_CACHE_HOME=$WORK/cache
cli_runs=() gui_runs=() frame_runs=()
for run in $(seq "$RUNS"); do
  cli=$("$CLI" run -m "$MODEL" -p "Once upon a time" -n "$TOKENS" --temp 0 2>&1 |
        grep -o 'generated [0-9]* tok, [0-9.]* tok/s' | awk '{print $4}')
  cli_runs+=("$cli")

  data=$WORK/data$run
  mkdir -p "$data/magnetar"
  echo "{\"format_version\":1,\"sampling\":{\"temperature\":0,\"max_tokens\":$TOKENS}}" >"$data/magnetar/settings.json"
  XDG_DATA_HOME=$data "$MAGNETAR" "$MODEL" >"$WORK/app.log" 2>&1 & APP_PID=$!
  for _ in $(seq 600); do xdotool search --name '^Magnetar — ' >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  WID=$(xdotool search --name '^Magnetar — ' | head -1)
  xdotool mousemove --window "$WID" 600 790 click 1; sleep 0.3
  xdotool type --delay 30 "Once upon a time"
  xdotool keydown Return; sleep 0.25; xdotool keyup Return
  gui=
  for _ in $(seq 3000); do
    gui=$($PY -c "
import glob, json, sys
for f in glob.glob('$data/magnetar/conversations/*.json'):
    m = json.load(open(f))['messages']
    if len(m) == 2 and m[1].get('stats'): print('%.2f' % m[1]['stats']['generate_tokens_per_second'])
" 2>/dev/null)
    [ -n "$gui" ] && break
    sleep 0.1
  done
  kill $APP_PID 2>/dev/null; wait $APP_PID 2>/dev/null; APP_PID=
  gui_runs+=("$gui")
  echo "run $run: cli ${cli} tok/s, gui ${gui} tok/s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mc=$(median "${cli_runs[@]}") mg=$(median "${gui_runs[@]}")
echo "median: cli $mc tok/s, gui $mg tok/s, gui/cli = $(awk "BEGIN {printf \"%.3f\", $mg/$mc}")"
