//go:build !amd64

package hfmodel

var useAVX2 = false

func expAVX2(x *float32, blocks int, shift, scale float32, c *[16]float32, sum *[8]float32) {
	panic("expAVX2 is only available on amd64")
}

func geluAVX2(x *float32, blocks int, c *[16]float32) {
	panic("geluAVX2 is only available on amd64")
}
