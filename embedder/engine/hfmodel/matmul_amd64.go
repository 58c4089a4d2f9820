package hfmodel

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly activations; they need AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expAVX2 and geluAVX2 are in activations_amd64.s (see activations.go).
//
//go:noescape
func expAVX2(x *float32, blocks int, shift, scale float32, c *[16]float32, sum *[8]float32)

//go:noescape
func geluAVX2(x *float32, blocks int, c *[16]float32)
