package tokens

import "testing"

func TestCount(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	// Reference counts from OpenAI's tokenizer for cl100k_base.
	for s, want := range map[string]int{
		"":                             0,
		"hello world":                  2,
		"tiktoken is great!":           6,
		"antidisestablishmentarianism": 6,
	} {
		if got := c.Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
}
