//go:build !amd64

package kernel

var useAVX2 = false

func dot2x4AVX2(a0, a1, b0, b1, b2, b3 *float32, blocks int, out *[8]float32) {
	panic("dot2x4AVX2 is only available on amd64")
}
