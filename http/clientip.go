package http

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads --trusted-proxies: comma-separated CIDRs or
// single addresses ("10.0.0.0/8, 192.168.1.5"). Empty: none.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR (10.0.0.0/8) nor an address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	if len(out) > 256 {
		return nil, fmt.Errorf("at most 256 trusted proxies, got %d", len(out))
	}
	return out, nil
}

// trusts reports whether a is one of the configured proxies.
func (s *Server) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the address a request is counted against (per-IP stream cap
// and rate limits). It is the connection's peer, unless the peer is a
// trusted proxy: then X-Forwarded-For is read from the right, skipping the
// trusted proxies, and the first address not trusted is the client (each
// proxy appends the address it received the request from, so only the
// entries right of the first untrusted one were written by proxies we
// trust; anything to its left the client may have forged). An entry that
// is not an address ends the walk at the last trusted hop; so does a list
// made only of trusted proxies.
func (s *Server) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(s.trusted) == 0 {
		return host
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusts(peer) {
		return host
	}
	client := peer.Unmap()
	xff := r.Header.Values("X-Forwarded-For")
	for i := len(xff) - 1; i >= 0; i-- {
		parts := strings.Split(xff[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client.String()
			}
			client = a.Unmap()
			if !s.trusts(client) {
				return client.String()
			}
		}
	}
	return client.String()
}
