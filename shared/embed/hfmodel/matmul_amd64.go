package hfmodel

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly micro-kernel; it needs AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot2x4AVX2 computes out[r*4+c] = a_r · b_c over blocks*8 floats.
//
//go:noescape
func dot2x4AVX2(a0, a1, b0, b1, b2, b3 *float32, blocks int, out *[8]float32)

// expAVX2 and geluAVX2 are in activations_amd64.s (see activations.go).
//
//go:noescape
func expAVX2(x *float32, blocks int, shift, scale float32, c *[16]float32, sum *[8]float32)

//go:noescape
func geluAVX2(x *float32, blocks int, c *[16]float32)
