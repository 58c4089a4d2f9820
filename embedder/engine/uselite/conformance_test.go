package uselite

import (
	"testing"

	"github.com/strata-kb/strata/embedder/engine/embedtest"
)

func TestConformance(t *testing.T) {
	m := testModel(t)
	embedtest.RunConformance(t, embedtest.Harness{
		Provider: m,
		Texts: []string{
			"How do I reset my password?",
			"The cat sat on the mat.",
			"Quarterly earnings beat analyst expectations.",
			"東京の天気",
			longText(160, 7), // over the 128 tokens the model reads
		},
		Normalized: true,
		// Only the first 128 tokens count (graphMaxTokens): a long text is cut.
		Slow: func() (embedtest.Provider, []string) {
			texts := make([]string, 3000)
			for i := range texts {
				texts[i] = longText(150, uint64(i))
			}
			return m, texts
		},
	})
}
