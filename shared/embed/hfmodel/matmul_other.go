//go:build !amd64

package hfmodel

var useAVX2 = false

func dot2x4AVX2(a0, a1, b0, b1, b2, b3 *float32, blocks int, out *[8]float32) {
	panic("dot2x4AVX2 is only available on amd64")
}

func expAVX2(x *float32, blocks int, shift, scale float32, c *[16]float32, sum *[8]float32) {
	panic("expAVX2 is only available on amd64")
}

func geluAVX2(x *float32, blocks int, c *[16]float32) {
	panic("geluAVX2 is only available on amd64")
}
