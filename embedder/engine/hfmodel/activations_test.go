package hfmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// withKernels runs f with the AVX2 kernels (when the CPU has them) and with
// the scalar code.
func withKernels(t *testing.T, f func(t *testing.T)) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	if saved {
		t.Run("avx2", func(t *testing.T) { useAVX2 = true; f(t) })
	}
	t.Run("scalar", func(t *testing.T) { useAVX2 = false; f(t) })
}

func TestGeluErf(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		in := []float32{0, -0, 1, -1, 4 * math.Sqrt2, -4 * math.Sqrt2, 5.7, -5.7, 10, -10, 100, -100, 1e-20, -1e-20, 3e38, -3e38}
		for range 1003 { // not a multiple of 8: the tail runs in scalar code
			in = append(in, float32(rng.NormFloat64()*3))
		}
		got := append([]float32(nil), in...)
		geluErf(got)
		worst := 0.0
		for i, x := range in {
			want := float64(x) / 2 * (1 + math.Erf(float64(x)/math.Sqrt2))
			err := math.Abs(float64(got[i])-want) / math.Max(1, math.Abs(float64(x)))
			worst = max(worst, err)
			if err > 3e-7 {
				t.Errorf("gelu(%g) = %g, want %g", x, got[i], want)
			}
		}
		t.Logf("largest error (relative above 1, absolute below): %.2g", worst)
	})
}

func TestSoftmaxScaled(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		worst := 0.0
		for _, n := range []int{1, 2, 7, 8, 9, 16, 31, 64, 257} {
			for _, spread := range []float64{0.01, 1, 10, 200} {
				row := make([]float32, n)
				for i := range row {
					row[i] = float32(rng.NormFloat64() * spread)
				}
				scale := float32(0.177)
				want := make([]float64, n)
				m, total := math.Inf(-1), 0.0
				for _, v := range row {
					m = math.Max(m, float64(v))
				}
				for i, v := range row {
					want[i] = math.Exp((float64(v) - m) * float64(scale))
					total += want[i]
				}
				got := append([]float32(nil), row...)
				softmaxScaled(got, scale)
				sum := 0.0
				for i := range got {
					w := want[i] / total
					// relative for the probabilities that matter; (x-max)
					// in float32 limits the tiny ones to absolute accuracy
					err := math.Abs(float64(got[i])-w) / math.Max(w, 1e-3)
					worst = max(worst, err)
					if err > 1e-6 {
						t.Fatalf("n=%d spread %g: p[%d] = %g, want %g", n, spread, i, got[i], w)
					}
					sum += float64(got[i])
				}
				if math.Abs(sum-1) > 1e-6 {
					t.Errorf("n=%d: probabilities sum to %v", n, sum)
				}
			}
		}
		t.Logf("largest error (relative above 1e-3): %.2g", worst)
	})
}
