// Generates ctf_vectors.txt lines for rCTF by evaluating its published
// formula in JavaScript (V8), as rCTF does. Run:
//   node gen_rctf.js > ctf_node.txt
const p0 = 0.7, p1 = 0.96
const c0 = -Math.atanh(p0), c1 = Math.atanh(p1)
const a = x => (1 - Math.tanh(x)) / 2
const b = x => (a((c1 - c0) * x + c0) - a(c1)) / (a(c0) - a(c1))
const score = (rl, rh, maxSolves, solves) => {
  const s = Math.max(1, maxSolves)
  const f = x => rl + (rh - rl) * b(x / s)
  return Math.round(Math.max(f(solves), f(s)))
}
const out = []
for (const rl of [0, 50, 100])
  for (const rh of [137, 500, 1000])
    for (const maxSolves of [0, 1, 2, 5, 10, 37, 100, 1000])
      for (let s = 0; s <= Math.min(maxSolves + 2, 150); s++)
        out.push(`rctf ${rl} ${rh} ${maxSolves} ${s} ${score(rl, rh, maxSolves, s)}`)
console.log(out.join('\n'))
