package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMatmulABt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, accel := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = accel
		for _, dims := range [][3]int{{1, 1, 1}, {1, 8, 1}, {2, 8, 4}, {3, 13, 5}, {7, 64, 9}, {10, 512, 1536}, {5, 1537, 3}, {128, 64, 128}} {
			m, k, n := dims[0], dims[1], dims[2]
			a := make([]float32, m*k)
			bt := make([]float32, n*k)
			for i := range a {
				a[i] = r.Float32()*2 - 1
			}
			for i := range bt {
				bt[i] = r.Float32()*2 - 1
			}
			got := make([]float32, m*n)
			MatmulABt(got, a, bt, m, k, n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					var want float64
					for x := 0; x < k; x++ {
						want += float64(a[i*k+x]) * float64(bt[j*k+x])
					}
					if math.Abs(float64(got[i*n+j])-want) > 1e-4*math.Sqrt(float64(k)) {
						t.Fatalf("accel=%v %v: [%d,%d] = %f, want %f", accel, dims, i, j, got[i*n+j], want)
					}
				}
			}
		}
		useAVX2 = saved
	}
}
