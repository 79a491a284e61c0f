#!/usr/bin/env bash
# find_secrets.sh [DIR...] — a small grep-based scanner for likely secrets.
# Prints "file:line: kind" for each hit (never the secret itself). Exit status: 0 when nothing
# was found, 1 when something was found, 2 on usage errors.
set -u
[ $# -eq 0 ] && set -- .
for d in "$@"; do
  [ -e "$d" ] || { echo "find_secrets.sh: no such file or directory: $d" >&2; exit 2; }
done

# kind<TAB>extended regex
PATTERNS='AWS access key id	(AKIA|ASIA)[0-9A-Z]{16}
private key	-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY
GitHub token	(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}
GitHub fine-grained token	github_pat_[A-Za-z0-9_]{22,}
Slack token	xox[abposr]-[A-Za-z0-9-]{10,}
Stripe secret key	(sk|rk)_live_[A-Za-z0-9]{16,}
Google API key	AIza[0-9A-Za-z_-]{35}
generic secret assignment	[A-Za-z0-9_.-]*([Aa][Pp][Ii][_-]?[Kk][Ee][Yy]|[Ss][Ee][Cc][Rr][Ee][Tt]|[Tt][Oo][Kk][Ee][Nn]|[Pp][Aa][Ss][Ss][Ww][Oo]?[Rr][Dd])[A-Za-z0-9_.-]*["'"'"']?[[:space:]]*[:=][[:space:]]*["'"'"'][^"'"'"'[:space:]]{8,}["'"'"']'

found=0
while IFS='	' read -r kind regex; do
  # -I skips binary files; -n line numbers; -o would print the secret, so we print only file:line.
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    printf '%s: %s\n' "$hit" "$kind"
    found=1
  done < <(grep -rInE \
      --exclude-dir=.git --exclude-dir=node_modules --exclude-dir=target \
      --exclude-dir=.venv --exclude-dir=__pycache__ \
      -e "$regex" "$@" 2>/dev/null | cut -d: -f1,2)
done <<< "$PATTERNS"
exit "$found"
