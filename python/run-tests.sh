#!/usr/bin/env bash
# Build the Python package from this checkout (maturin, dev profile, sharing the main
# workspace's target folder so the library crates `cargo test` built are reused),
# install it, and run its tests. Installs maturin, numpy, pandas, pyarrow, ray, tqdm and
# pytest when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
pip=(python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore)
need=()
for m in maturin numpy pandas pyarrow ray tqdm pytest; do
  if ! python3 -c "import $m" 2>/dev/null; then
    need+=("$m")
  fi
done
if ((${#need[@]})); then
  "${pip[@]}" "${need[@]}"
fi
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
CARGO_TARGET_DIR="$PWD/target" python3 -m maturin build --quiet --locked --profile dev -m python/Cargo.toml -o "$wheels"
"${pip[@]}" --force-reinstall --no-deps "$wheels"/tpusim-*.whl
# the CLI the equivalence tests compare with: the build `cargo test` just made
export TPUSIM_BIN="${TPUSIM_BIN:-$PWD/target/debug/tpusim}"
[[ -x $TPUSIM_BIN ]] || cargo build --quiet -p tpusim
python3 -m pytest -q python/tests "$@"
