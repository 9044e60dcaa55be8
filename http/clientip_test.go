package http

import (
	"net/http"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.168.1.5, ::1")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{trusted: trusted}
	tests := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"NoProxy", "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"TrustedProxyNoHeader", "10.1.2.3:5000", nil, "10.1.2.3"},
		{"OneHop", "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"ForgedLeftIgnored", "10.1.2.3:5000", []string{"6.6.6.6, 203.0.113.9"}, "203.0.113.9"},
		{"TwoTrustedHops", "10.1.2.3:5000", []string{"6.6.6.6, 203.0.113.9, 192.168.1.5"}, "203.0.113.9"},
		{"SeveralHeaders", "10.1.2.3:5000", []string{"6.6.6.6", "203.0.113.9, 10.9.9.9"}, "203.0.113.9"},
		{"AllTrusted", "10.1.2.3:5000", []string{"10.0.0.1, 10.0.0.2"}, "10.0.0.1"},
		{"GarbageStopsAtLastTrustedHop", "10.1.2.3:5000", []string{"203.0.113.9, bogus, 10.0.0.7"}, "10.0.0.7"},
		{"IPv6Proxy", "[::1]:5000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"MappedIPv4", "10.1.2.3:5000", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"UntrustedPeerAmongTrustedNets", "192.168.1.6:5000", []string{"1.2.3.4"}, "192.168.1.6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientIP(r); got != tt.want {
				t.Fatalf("clientIP = %q, want %q", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}

func TestRateAddr(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.9": "203.0.113.9", "2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64", "::ffff:1.2.3.4": "1.2.3.4",
	} {
		if got := rateAddr(in); got != want {
			t.Errorf("rateAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
