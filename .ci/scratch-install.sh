# Sourced by .ci/conformance.sh and .ci/conformance-authorization.sh: tools that must not be project
# dependencies (Node 22 for the conformance suite, the suite, the inspector) go into $SCRATCH/<folder>,
# kept between runs; a marker file records what each folder holds, so whichever script runs first
# installs for both. Needs SCRATCH set; prints through log() when the caller defines one.
scratch_install() { # folder package
  local dir=$SCRATCH/$1 spec=$2
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$spec" ]; then
    if declare -F log >/dev/null; then log "installing $spec into $dir"; else echo "installing $spec into $dir"; fi
    rm -rf "$dir" && mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$spec" >"$dir.install.log" 2>&1 \
      || { cat "$dir.install.log"; exit 1; }
    echo "$spec" >"$dir/.installed"
  fi
}
