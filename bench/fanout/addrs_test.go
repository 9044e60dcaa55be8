package main

import "testing"

// TestSourceAddr: --addrs numbers loopback source addresses from
// 127.0.1.1, 250 to a /24, as bench/streammem does.
func TestSourceAddr(t *testing.T) {
	for a, want := range map[int]string{0: "127.0.1.1:0", 1: "127.0.1.2:0", 249: "127.0.1.250:0", 250: "127.0.2.1:0", 62499: "127.0.250.250:0"} {
		if got := sourceAddr(a).String(); got != want {
			t.Errorf("sourceAddr(%d) = %s, want %s", a, got, want)
		}
	}
	for _, bad := range []string{"--addrs=-1", "--addrs=62501"} {
		if _, err := parseFlags([]string{"--key=k", bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := parseFlags([]string{"--key=k", "--addrs=4"}); err != nil {
		t.Errorf("--addrs=4: %v", err)
	}
}
