#!/usr/bin/env python3
"""Test vectors for tpusim's reproduction of TPU-MLIR's local-memory allocator
(crates/planner/tests/data/tpumlir_lmem_alloc.json), from runs of
bench/plan-tpumlir-debug.sh: for every layer group of OUTDIR/final.mlir whose time
steps TPU-MLIR did not merge afterwards (TimeStepCombine: its `flow` has as many steps
as the group has ops), the buffers with their sizes and addresses (the final MLIR's
`ginfo`) and lifetimes (the `lmem_buffer_assign` log), the ops of each step and the
transfers. A first-layer (3ic) conv's scratch buffer is marked `always` (see
planner::tpumlir_alloc::Buf::always).

Usage: bench/plan_tpumlir_alloc_vectors.py LMEM EU_BYTES BANKS OUTDIR...  > groups.json
(bm1684x: 262144 64 16; bm1688: 131072 16 16). Prints every such group; the committed
file keeps the ones our allocator reproduces to the byte (tests/data/README.md lists
the others and why)."""
import json, re, sys

INPLACE = {'Add', 'Sub', 'Mul', 'Div', 'Min', 'Max', 'Reshape'}

def parse_log(path):
    groups = []; cur = None
    for line in open(path):
        if 'lmem_buffer_assign' not in line: continue
        m = re.search(r'process_current_stage; stg = (\d+)', line)
        if m:
            if int(m.group(1)) == 0: cur = {}; groups.append(cur)
            continue
        m = re.search(r'step = +(\w+); lmem_key = ([^;]+); lmem_type = (\w+);(.*)', line)
        if not m: continue
        step, key, typ, rest = m.groups()
        st = int(re.search(r'lmem_start_ts = (-?\d+)', rest).group(1))
        en = int(re.search(r'lmem_end_ts = (-?\d+)', rest).group(1))
        if typ != 'LMEM_OPERATION': cur[key] = (st, en)
        if step == 'update_store_buffer': cur[('store', key)] = en
    return groups

def parse_mlir(path):
    txt = open(path).read()
    locs = dict(re.findall(r'^#(loc\d+) = loc\("([^"]+)"\)', txt, re.M))
    groups = []; cur = None
    flows = [len(re.findall(r'-\d+', f)) for f in re.findall(r'flow = \[([^\]]*)\]', txt)]
    for line in txt.splitlines():
        if '"tpu.Group"' in line: cur = []; groups.append(cur); continue
        if cur is None: continue
        if '"tpu.Yield"' in line: cur = None; continue
        m = re.search(r'^\s*(%\w+) = "tpu\.(\w+)"\(([^)]*)\)', line)
        g = re.search(r'ginfo = #tpu\.lg<out_addr = (\d+), out_size = (\d+), buffer_addr = (\d+), buffer_size = (\d+).*?n_idx = \[([^\]]*)\].*?h_idx = \[([^\]]*)\]', line)
        if not m or not g: continue
        l = re.findall(r'loc\((#loc\d+)\)\s*$', line)
        name = locs.get(l[0][1:], l[0]) if l else '?'
        lt = re.search(r'lmem_type = (\d+)', line)
        cur.append(dict(res=m.group(1), kind=m.group(2), args=[a.strip() for a in m.group(3).split(',') if a.strip()],
                        name=name, out_addr=int(g.group(1)), out_size=int(g.group(2)), buf_addr=int(g.group(3)),
                        buf_size=int(g.group(4)), sliced=(',' in g.group(5) or ',' in g.group(6)),
                        weight=(lt is not None and lt.group(1) == '0')))
    global FLOWS; FLOWS = flows
    return groups

def build(entries, life):
    """problem: buffers with size/start/end/hold/kind, ts tables."""
    comp = [e for e in entries if e['kind'] not in ('Load', 'Store')]
    N = len(comp)
    ts_of = {e['res']: i for i, e in enumerate(comp)}
    bufs = []; idx = {}
    one_loop = not any(e['sliced'] for e in entries)
    # weights first, activations, operations (map order by type); within: appearance order
    for e in entries:
        if e['kind'] == 'Load' and e['weight']:
            key = e['name'][5:] if e['name'].startswith('load_') else e['name']
            s, en = life[key]
            idx[e['res']] = len(bufs)
            bufs.append(dict(name=key, type='W', size=e['out_size'], start=s, end=en, hold=True, addr=e['out_addr']))
    for e in entries:
        if (e['kind'] == 'Load' and not e['weight']) or e['kind'] not in ('Load', 'Store'):
            key = e['name'][5:] if e['kind'] == 'Load' and e['name'].startswith('load_') else e['name']
            if key not in life and e['args'] and e['args'][0].startswith('%arg'):
                key = 'input'
            if key not in life:
                print('  no lifetime for', key); continue
            s, en = life[key]
            idx[e['res']] = len(bufs)
            bufs.append(dict(name=key, type='A', size=e['out_size'], start=s, end=en, hold=False, addr=e['out_addr']))
    ops = []
    for e in comp:
        t = ts_of[e['res']]
        ob = None
        if e['buf_size'] > 0:
            ob = len(bufs)
            bufs.append(dict(name=e['name'] + '.buffer', type='O', size=e['buf_size'], start=t, end=t, hold=False, addr=e['buf_addr']))
        operands = [idx[a] for a in e['args'] if a in idx]
        ops.append(dict(ts=t, name=e['name'], kind=e['kind'], operands=operands, result=idx[e['res']], imm=ob))
    # gdma per ts
    gdma = [[] for _ in range(N)]
    stored_at = {}; modes = []
    for e in entries:
        if e['kind'] == 'Load':
            b = idx[e['res']]; gdma[bufs[b]['start']].append(b); modes.append((bufs[b]['start'], b, 'load'))
        if e['kind'] == 'Store':
            b = idx[e['args'][0]]; t = life[('store', bufs[b]['name'])]; gdma[t].append(b); stored_at[b] = t; modes.append((t, b, 'store'))
    # users count of operand0 (within group)
    users = {}
    for o in ops:
        for b in o['operands']: users[b] = users.get(b, 0) + 1
    return dict(modes=modes, N=N, one_loop=one_loop, bufs=bufs, ops=ops, gdma=gdma, stored_at=stored_at, users=users)


def vector(P, source, gi):
    kinds = {'W': 'weight', 'A': 'activation', 'O': 'operation'}
    users = {}
    for o in P['ops']:
        for b in o['operands']:
            users[b] = users.get(b, 0) + 1
    def is3ic(o):
        return any(P['bufs'][b]['name'].startswith('input') and P['bufs'][b]['name'].endswith('_f16')
                   for b in o['operands'])
    always = {o['imm'] for o in P['ops'] if o['imm'] is not None and is3ic(o)}
    return dict(source=source, group=gi, lmem_bytes=LMEM, eu_bytes=EU, bank_bytes=BANK,
                one_loop=P['one_loop'], ts_count=P['N'],
                buffers=[dict(name=b['name'], kind=kinds[b['type']], size=b['size'], start=b['start'],
                              end=b['end'], hold=b['hold'], always=i in always) for i, b in enumerate(P['bufs'])],
                ops=[dict(ts=o['ts'], name=o['name'], operands=o['operands'], result=o['result'], imm=o['imm'],
                          inplace=o['kind'] in INPLACE and bool(o['operands']) and users.get(o['operands'][0], 0) == 1)
                     for o in P['ops']],
                gdma=[[dict(buffer=b, mode=m) for (tt, b, m) in P['modes'] if tt == t] for t in range(P['N'])],
                addr=[b['addr'] for b in P['bufs']])

if __name__ == '__main__':
    LMEM, EU = int(sys.argv[1]), int(sys.argv[2]); BANK = LMEM // int(sys.argv[3])
    out = []
    for D in sys.argv[4:]:
        logs = parse_log(D + '/dbg.log'); gs = parse_mlir(D + '/final.mlir')
        for gi, entries in enumerate(gs):
            names = [e['name'] for e in entries if e['kind'] not in ('Load', 'Store')]
            cands = [l for l in logs if all(n in l for n in names)]
            if not cands:
                continue
            P = build(entries, cands[-1])
            if FLOWS[gi] != P['N']:
                continue  # re-timed by TimeStepCombine after allocation
            out.append(vector(P, D.rstrip('/').split('/')[-1], gi))
    json.dump(out, sys.stdout, separators=(',', ':'))
