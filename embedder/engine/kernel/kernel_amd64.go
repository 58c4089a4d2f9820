package kernel

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly micro-kernel; it needs AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dot2x4AVX2(a0, a1, b0, b1, b2, b3 *float32, blocks int, out *[8]float32)
