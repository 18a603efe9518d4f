#!/bin/sh
# Shapes per second of `tpusim layout default` (v5e), end to end through the CLI:
# 200,000 rank-1..4 shapes on stdin, one canonical shape-with-layout per line out.
#   sh bench/layout_default_throughput.sh [path/to/tpusim]
set -e
T=${1:-target/release/tpusim}
F=$(mktemp)
python3 - "$F" <<'PY'
import random, sys
random.seed(7)
types = ["f32", "bf16", "s8", "pred", "s4", "f16", "s32"]
with open(sys.argv[1], "w") as f:
    for i in range(200000):
        r = random.randint(1, 4)
        dims = ",".join(str(random.choice([1, 2, 3, 7, 8, 100, 128, 1000, 4096])) for _ in range(r))
        f.write(f"{random.choice(types)}[{dims}]\n")
PY
for i in 1 2 3; do
  /usr/bin/time -f "%e s" "$T" layout default - --tpu v5e < "$F" > /dev/null 2> "$F.time" || { cat "$F.time"; exit 1; }
  s=$(cut -d' ' -f1 "$F.time")
  python3 -c "print('200000 shapes in %s s = %.0f shapes/s' % ('$s', 200000 / max(float('$s'), 1e-9)))"
done
rm -f "$F" "$F.time"
