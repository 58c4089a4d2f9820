package uselite

// matmulABt computes dst[m,n] = a[m,k] · bt[n,k]ᵀ, i.e. a times b where b is
// supplied transposed (weights are transposed once at load), so that every
// output element is a dot product of two contiguous rows.
//
// The work is done in 2x4 tiles: two rows of a against four rows of bt, with
// eight accumulators, so each loaded vector is reused 2-4 times. On amd64
// with AVX2+FMA the tile is an assembly kernel (plain Go assembly, no cgo);
// elsewhere the same tiling runs in Go. The loop is blocked over rows of bt
// so a block of weights stays in the L2 cache while all rows of a stream
// past it.
func matmulABt(dst, a, bt []float32, m, k, n int) {
	dst = dst[:m*n]
	if k == 0 {
		clear(dst)
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
	for j0 := 0; j0 < n; j0 += nb {
		j1 := min(j0+nb, n)
		for i := 0; i < m; i += 2 {
			i1 := min(i+1, m-1) // odd m: compute row i twice, store once
			a0, a1 := a[i*k:(i+1)*k], a[i1*k:(i1+1)*k]
			for j := j0; j < j1; j += 4 {
				var jj [4]int
				for c := range jj {
					jj[c] = min(j+c, j1-1) // ragged edge: repeat the last row
				}
				b0, b1 := bt[jj[0]*k:(jj[0]+1)*k], bt[jj[1]*k:(jj[1]+1)*k]
				b2, b3 := bt[jj[2]*k:(jj[2]+1)*k], bt[jj[3]*k:(jj[3]+1)*k]
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
				for c := 0; c < 4 && j+c < j1; c++ {
					dst[i*n+j+c] = out[c]
					if i+1 < m {
						dst[(i+1)*n+j+c] = out[4+c]
					}
				}
			}
		}
	}
}
