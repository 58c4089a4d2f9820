package uselite

import "github.com/strata-kb/strata/embedder/engine/kernel"

// matmulABt computes dst[m,n] = a[m,k] · bt[n,k]ᵀ (see kernel.MatmulABt).
func matmulABt(dst, a, bt []float32, m, k, n int) { kernel.MatmulABt(dst, a, bt, m, k, n) }
