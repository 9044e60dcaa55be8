package webhooks

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Guard refuses destinations a webhook must not reach from the server
// (SSRF): loopback, link-local, private, unspecified, multicast and the
// other special ranges below, unless AllowPrivate is set (a receiver on
// the same host or network, as in tests). The check runs on the address
// actually dialled (Control), after DNS resolution, so a name that
// resolves to a public address when the endpoint is saved and to a
// private one at delivery (DNS rebinding) is refused all the same.
type Guard struct {
	AllowPrivate bool
}

// MaxURL is the longest endpoint URL accepted.
const MaxURL = 2048

// special lists ranges the netip predicates do not name but that are not
// the public internet: "this network", shared address space (CGNAT),
// IETF protocol assignments, benchmarking, the documentation ranges,
// reserved and broadcast, and NAT64/6to4 ranges that can embed an
// internal IPv4 address.
var special = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"64:ff9b::/96", "64:ff9b:1::/48", "2001:db8::/32", "2002::/16", "100::/64",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// CheckAddr returns why a may not be dialled, nil if it may.
func (g Guard) CheckAddr(a netip.Addr) error {
	if g.AllowPrivate {
		return nil
	}
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	var why string
	switch {
	case !a.IsValid():
		why = "invalid"
	case a.IsUnspecified():
		why = "unspecified"
	case a.IsLoopback():
		why = "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		why = "link-local"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		why = "multicast"
	case a.IsPrivate():
		why = "private"
	default:
		for _, p := range special {
			if p.Contains(a) {
				why = "reserved"
				break
			}
		}
	}
	if why != "" {
		return fmt.Errorf("webhooks: destination %s is a %s address (refused unless private destinations are allowed)", a, why)
	}
	return nil
}

// Control is a net.Dialer Control function: it refuses a connection to an
// address CheckAddr refuses, once the name is resolved and before the
// connection is made.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhooks: dial %s: %w", address, err)
	}
	return g.CheckAddr(ap.Addr())
}

// CheckURL returns why raw may not be an endpoint's URL, nil if it may:
// an absolute http or https URL of at most MaxURL bytes, with a host, no
// user info and no fragment, whose host is not a refused IP literal or
// "localhost". Names are checked again, resolved, at each delivery.
func (g Guard) CheckURL(raw string) error {
	if len(raw) > MaxURL {
		return fmt.Errorf("url is %d bytes (at most %d)", len(raw), MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("url does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url must be http or https")
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("url must name a host")
	}
	if u.User != nil {
		return fmt.Errorf("url must not carry user info")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("url must not carry a fragment")
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if err := g.CheckAddr(a); err != nil {
			return err
		}
	} else if !g.AllowPrivate {
		h := strings.TrimSuffix(strings.ToLower(host), ".")
		if h == "localhost" || strings.HasSuffix(h, ".localhost") {
			return fmt.Errorf("webhooks: destination %s is loopback (refused unless private destinations are allowed)", host)
		}
	}
	return nil
}

// dialer returns a dialer whose connections pass the guard.
func (g Guard) dialer(timeout net.Dialer) *net.Dialer {
	d := timeout
	d.Control = g.Control
	return &d
}
