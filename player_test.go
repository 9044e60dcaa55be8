package podium

import (
	"errors"
	"testing"
)

// TestValidPlayerID: new ids refuse characters that make two ids look the
// same; ValidPlayerRef keeps the older rule (no controls) for ids stored
// before.
func TestValidPlayerID(t *testing.T) {
	for _, c := range []struct {
		id       string
		new, ref bool
	}{
		{"p1", true, true},
		{"steam:765611", true, true},
		{"Zoë Ω 日本 🙂", true, true},
		{"John Smith", true, true},
		{"عمر", true, true},
		{"p\u200b1", false, true},     // zero-width space
		{"p\u200c1", false, true},     // zero-width non-joiner
		{"p\u200d1", false, true},     // zero-width joiner
		{"p\u20601", false, true},     // word joiner
		{"\ufeffp1", false, true},     // a leading BOM
		{"p1\ufeff", false, true},     // zero-width no-break space
		{"p\u202e1", false, true},     // right-to-left override
		{"p\u202a1", false, true},     // left-to-right embedding
		{"p\u20661", false, true},     // left-to-right isolate
		{"p\u20691", false, true},     // pop directional isolate
		{"p\u200e1", false, true},     // left-to-right mark
		{"p\u200f1", false, true},     // right-to-left mark
		{"p\u061c1", false, true},     // Arabic letter mark
		{"p\u00ad1", false, true},     // soft hyphen
		{"p\u034f1", false, true},     // combining grapheme joiner
		{"p\u31641", false, true},     // Hangul filler
		{"p\ufe0f1", false, true},     // variation selector
		{"p\U000e00411", false, true}, // tag letter
		{"p\u00a01", false, true},     // no-break space
		{"p\u20031", false, true},     // em space
		{"p\u30001", false, true},     // ideographic space
		{" p1", false, true},
		{"p1 ", false, true},
		{"p\t1", false, false},
		{"p\x001", false, false},
		{"p\u00851", false, false}, // next line (C1 control)
		{"", false, false},
		{"\xff", false, false},
	} {
		err := ValidPlayerID(c.id)
		if (err == nil) != c.new {
			t.Errorf("ValidPlayerID(%+q) = %v, want ok %v", c.id, err, c.new)
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Code != ECodeInvalid) {
			t.Errorf("ValidPlayerID(%+q): %v is not invalid_argument", c.id, err)
		}
		if err := ValidPlayerRef(c.id); (err == nil) != c.ref {
			t.Errorf("ValidPlayerRef(%+q) = %v, want ok %v", c.id, err, c.ref)
		}
	}
}
