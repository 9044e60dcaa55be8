// Generates tanh_node.txt: the bits of V8's Math.tanh at 4001 points of
// [-4, 4] and at rCTF's constants, to pin jsTanh to it. Run:
//   node gen_tanh.js > tanh_node.txt
const f = new Float64Array(1), u = new BigUint64Array(f.buffer)
const bits = x => { f[0] = x; return u[0].toString(16) }
const xs = [-Math.atanh(0.7), Math.atanh(0.96)]
for (let i = 0; i <= 4000; i++) xs.push(-4 + i * 0.002 + i * 1e-7)
console.log(xs.map(x => `${bits(x)} ${bits(Math.tanh(x))}`).join('\n'))
