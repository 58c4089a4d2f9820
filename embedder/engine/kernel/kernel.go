// Package kernel holds the matrix product the local embedding models
// (uselite, hfmodel) spend their time in: one tiled loop with an AVX2/FMA
// assembly micro-kernel on amd64 and the same tiling in Go elsewhere.
package kernel

// MatmulABt computes dst[m,n] = a[m,k] · bt[n,k]ᵀ, i.e. a times b where b is
// supplied transposed (weights are transposed once at load), so that every
// output element is a dot product of two contiguous rows.
func MatmulABt(dst, a, bt []float32, m, k, n int) {
	MatmulCols(dst[:m*n], a, bt, m, k, n, 0, n)
}

// MatmulCols computes the columns j0..j1 of dst[m,n] = a[m,k] · bt[n,k]ᵀ.
//
// The work is done in 2x4 tiles: two rows of a against four rows of bt,
// with eight accumulators, so each loaded vector is reused 2-4 times (an
// AVX2/FMA assembly kernel on amd64, the same tiling in Go elsewhere). The
// loop is blocked over rows of bt so a block of weights stays in the L2
// cache while all rows of a stream past it.
func MatmulCols(dst, a, bt []float32, m, k, n, j0, j1 int) {
	if m == 0 || j0 >= j1 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(dst[i*n+j0 : i*n+j1])
		}
		return
	}
	_ = a[m*k-1]
	_ = bt[n*k-1]
	const blockBytes = 192 << 10
	nb := max(4, (blockBytes/(4*k))&^3)
	blocks := k / 8
	if !useAVX2 {
		blocks = 0
	}
	var out [8]float32
	for jb := j0; jb < j1; jb += nb {
		je := min(jb+nb, j1)
		for i := 0; i < m; i += 2 {
			i1 := min(i+1, m-1) // odd m: compute row i twice, store once
			a0, a1 := a[i*k:(i+1)*k], a[i1*k:(i1+1)*k]
			for j := jb; j < je; j += 4 {
				r1, r2, r3 := min(j+1, je-1), min(j+2, je-1), min(j+3, je-1) // ragged edge: repeat the last row
				b0, b1 := bt[j*k:(j+1)*k], bt[r1*k:(r1+1)*k]
				b2, b3 := bt[r2*k:(r2+1)*k], bt[r3*k:(r3+1)*k]
				out = [8]float32{}
				if blocks > 0 {
					dot2x4AVX2(&a0[0], &a1[0], &b0[0], &b1[0], &b2[0], &b3[0], blocks, &out)
				}
				for x := blocks * 8; x < k; x++ {
					u, v := a0[x], a1[x]
					out[0] += u * b0[x]
					out[1] += u * b1[x]
					out[2] += u * b2[x]
					out[3] += u * b3[x]
					out[4] += v * b0[x]
					out[5] += v * b1[x]
					out[6] += v * b2[x]
					out[7] += v * b3[x]
				}
				for c := 0; c < 4 && j+c < je; c++ {
					dst[i*n+j+c] = out[c]
					if i+1 < m {
						dst[(i+1)*n+j+c] = out[4+c]
					}
				}
			}
		}
	}
}
