// Package csvcell keeps text cells of a CSV file from being read as
// formulas by a spreadsheet (CSV or formula injection).
//
// The rule is OWASP's: a cell that begins with =, +, -, @, a tab or a
// carriage return gets a leading apostrophe, which spreadsheets show as
// text. So that the rule can be undone exactly, a cell that begins with
// apostrophes followed by one of those characters gets one more apostrophe
// too: Unescape removes exactly one leading apostrophe from both kinds and
// leaves every other cell alone.
//
// Only text cells go through Escape. Numbers that podium formats itself
// (ranks, keys, scores, counts) are written as they are: a spreadsheet reads
// -40 as the number -40, which is what it is, not a formula.
package csvcell

import "strings"

// trigger reports whether a cell that begins with c may be taken for a
// formula.
func trigger(c byte) bool {
	return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r'
}

// quoted reports whether s is apostrophes followed by a trigger character.
func quoted(s string) bool {
	rest := strings.TrimLeft(s, "'")
	return len(rest) < len(s) && rest != "" && trigger(rest[0])
}

// Escape returns the cell to write for the text s.
func Escape(s string) string {
	if s != "" && (trigger(s[0]) || quoted(s)) {
		return "'" + s
	}
	return s
}

// Unescape returns the text that Escape wrote as the cell s.
func Unescape(s string) string {
	if quoted(s) {
		return s[1:]
	}
	return s
}
