package main

import (
	"strings"
	"testing"
)

// TestOpenFilesAdvice: a --stream-max that the open-file limit cannot
// hold, with the server's own files, is warned about at start; one that
// fits, an unknown limit and no streams are not. With --h2c the warning
// says that it counts HTTP/1.1 streams.
func TestOpenFilesAdvice(t *testing.T) {
	for _, tc := range []struct {
		limit     uint64
		streamMax int
		h2c       bool
		warn      string
	}{
		{20000, 20000, false, "--stream-max 20000 is more than the open file limit allows (20000 files: about 19744 streams"},
		{20000, 60000, false, "--stream-max 60000"},
		{20000, 60000, false, "raise the hard limit (LimitNOFILE=, --ulimit nofile=) or lower --stream-max"},
		{100, 10, false, "about 0 streams"},
		{20000, 19744, false, ""},
		{1 << 20, 50000, false, ""},
		{0, 50000, false, ""},
		{20000, 0, false, ""},
		{20000, 60000, true, "streams over h2c (--h2c) share a connection"},
		{20000, 10000, true, ""},
	} {
		got := openFilesAdvice(tc.limit, tc.streamMax, tc.h2c)
		if tc.warn == "" && got != "" || tc.warn != "" && !strings.Contains(got, tc.warn) {
			t.Errorf("limit %d, --stream-max %d: %q, want %q", tc.limit, tc.streamMax, got, tc.warn)
		}
	}
}
