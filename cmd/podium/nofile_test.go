package main

import (
	"strings"
	"testing"
)

// TestOpenFilesAdvice: a --stream-max that the open-file limit cannot
// hold, with the server's own files, is warned about at start; one that
// fits, an unknown limit and no streams are not.
func TestOpenFilesAdvice(t *testing.T) {
	for _, tc := range []struct {
		limit     uint64
		streamMax int
		warn      string
	}{
		{20000, 20000, "--stream-max 20000 is more than the open file limit allows (20000 files: about 19744 streams"},
		{20000, 60000, "--stream-max 60000"},
		{100, 10, "about 0 streams"},
		{20000, 19744, ""},
		{1 << 20, 50000, ""},
		{0, 50000, ""},
		{20000, 0, ""},
	} {
		got := openFilesAdvice(tc.limit, tc.streamMax)
		if tc.warn == "" && got != "" || tc.warn != "" && !strings.Contains(got, tc.warn) {
			t.Errorf("limit %d, --stream-max %d: %q, want %q", tc.limit, tc.streamMax, got, tc.warn)
		}
	}
}
