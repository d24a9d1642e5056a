package gen

import "math/bits"

// Stream purposes: each kind of random draw gets its own family of streams.
const (
	purposeEndpoints uint64 = iota + 1
	purposeWeights
	purposePermutation
)

// mix64 is the splitmix64 finaliser (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): a bijection on uint64 that
// spreads every input bit over every output bit.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// golden is 2^64 divided by the golden ratio, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// stream is a splitmix64 generator. Its zero value is usable but every
// generator here starts one with newStream so that chunks are independent.
type stream struct{ state uint64 }

// newStream starts the stream of one chunk: its state is a hash of the seed,
// the purpose and the chunk index, so any chunk can be generated alone, in
// any order, on any goroutine.
func newStream(seed, purpose, chunk uint64) stream {
	s := mix64(seed + golden*purpose)
	s = mix64(s ^ (chunk * 0xd1b54a32d192ed03))
	return stream{state: s}
}

// next returns 64 random bits.
func (r *stream) next() uint64 {
	r.state += golden
	return mix64(r.state)
}

// below returns a uniform integer in [0, n) for n > 0 by Lemire's
// multiply-and-reject method ("Fast random integer generation in an
// interval", ACM TOMACS 2019); n == 0 stands for 2^64.
func (r *stream) below(n uint64) uint64 {
	if n == 0 {
		return r.next()
	}
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// float returns a uniform float64 in [0, 1) with 53 random bits.
func (r *stream) float() float64 {
	return float64(r.next()>>11) * 0x1p-53
}
