#!/usr/bin/env bash
# Prints one-line `deb-src` entries for every Debian suite that apt is configured to use (both the
# one-line sources.list format and deb822 .sources files), with the same URIs, suites, components
# and signing options, so `apt-get source` uses the machine's own mirror. Only suites of this
# Debian release (VERSION_CODENAME in /etc/os-release, e.g. bookworm, bookworm-updates,
# bookworm-security) are taken: third-party repositories rarely publish sources.
#   installer/windows/deb-src-from-sources.sh [APT_DIR]     (default /etc/apt)
set -euo pipefail
apt_dir=${1:-/etc/apt}
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { echo "no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }

files=()
[ -f "$apt_dir/sources.list" ] && files+=("$apt_dir/sources.list")
for f in "$apt_dir"/sources.list.d/*.list "$apt_dir"/sources.list.d/*.sources; do
  [ -f "$f" ] && files+=("$f")
done
[ ${#files[@]} -gt 0 ] || exit 0

for f in "${files[@]}"; do
  case $f in
    *.sources)  # deb822: blank-line separated stanzas of "Key: value" fields
      awk -v codename="$codename" '
        function flush(   n, i, s, suites, has_deb, opts) {
          has_deb = 0
          n = split(types, t, /[ \t]+/)
          for (i = 1; i <= n; i++) if (t[i] == "deb") has_deb = 1
          if (has_deb && enabled != "no" && uris != "" && suite_list != "") {
            opts = ""
            if (signed != "") opts = " [signed-by=" signed "]"
            n = split(suite_list, s, /[ \t]+/)
            for (i = 1; i <= n; i++)
              if (s[i] == codename || index(s[i], codename "-") == 1) {
                split(uris, u, /[ \t]+/)
                print "deb-src" opts " " u[1] " " s[i] " " components
              }
          }
          types = uris = suite_list = components = signed = enabled = ""
        }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        {
          key = tolower($1); sub(/:$/, "", key)
          value = $0; sub(/^[^:]*:[ \t]*/, "", value)
          if (key == "types") types = value
          else if (key == "uris") uris = value
          else if (key == "suites") suite_list = value
          else if (key == "components") components = value
          else if (key == "signed-by") signed = value
          else if (key == "enabled") enabled = tolower(value)
        }
        END { flush() }' "$f" ;;
    *)  # one-line format: deb [options] URI suite component...
      awk -v codename="$codename" '
        $1 == "deb" {
          i = 2; opts = ""
          if ($2 ~ /^\[/) { while (i <= NF) { opts = opts (opts == "" ? "" : " ") $i; if ($i ~ /\]$/) break; i++ }; i++ }
          uri = $i; suite = $(i + 1); comps = ""
          for (j = i + 2; j <= NF; j++) comps = comps " " $j
          if (suite == codename || index(suite, codename "-") == 1)
            print "deb-src" (opts == "" ? "" : " " opts) " " uri " " suite comps
        }' "$f" ;;
  esac
done | sort -u
