// Package scoring holds podium's scoring formulas: pure functions of small
// integers with no I/O, each bit-exact to the published formula it names
// and tested against vectors computed from it.
//
// ctf.go has the values of CTF challenges (CTFd static, linear and
// "logarithmic" decay, rCTF's tanh curve, GZCTF's exponential decay) and
// first-blood bonuses.
//
// Floating point: where a published formula is evaluated in float64, the
// Go code evaluates the same operations in the same order, and wraps each
// product that is followed by an addition in an explicit float64()
// conversion. The Go specification lets a compiler fuse x*y+z into one
// fused multiply-add (rounded once, not twice) on architectures that have
// the instruction, such as arm64; an explicit conversion forbids that, so
// every node computes the same value whatever its architecture.
package scoring
