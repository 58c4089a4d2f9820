package hfmodel

import (
	"sync"

	"github.com/strata-kb/strata/embedder/engine/kernel"
)

// linear computes dst[m,n] = a[m,k] · w[n,k]ᵀ + bias[n]: a PyTorch
// nn.Linear, whose weight is stored [out, in], so every output element is
// the dot product of two contiguous rows. The output columns (weight rows)
// are split across up to threads goroutines, so each goroutine streams its
// own part of the weights; bias may be nil.
func linear(dst, a, w, bias []float32, m, k, n, threads int) {
	dst = dst[:m*n]
	parts := max(1, min(threads, n/16))
	if parts == 1 || m*n*k < 1<<16 {
		kernel.MatmulCols(dst, a, w, m, k, n, 0, n)
	} else {
		var wg sync.WaitGroup
		for p := range parts {
			// 16-column boundaries keep the goroutines' writes on separate
			// cache lines.
			j0 := (n * p / parts) &^ 15
			j1 := (n * (p + 1) / parts) &^ 15
			if p == parts-1 {
				j1 = n
			}
			if j0 >= j1 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				kernel.MatmulCols(dst, a, w, m, k, n, j0, j1)
			}()
		}
		wg.Wait()
	}
	if bias != nil {
		for i := range m {
			row := dst[i*n : (i+1)*n]
			for j, b := range bias[:n] {
				row[j] += b
			}
		}
	}
}
