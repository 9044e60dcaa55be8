package webhooks_test

import (
	"net/netip"
	"testing"

	"github.com/podiumhq/podium/webhooks"
)

func TestGuardAddr(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "::", "10.0.0.1", "172.16.5.4", "192.168.1.1",
		"169.254.169.254", "fe80::1", "fc00::1", "fd12::1", "224.0.0.1", "ff02::1", "100.64.0.1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "255.255.255.255", "0.1.2.3", "64:ff9b::a9fe:a9fe",
	}
	allowed := []string{"1.1.1.1", "8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "172.32.0.1"}
	g := webhooks.Guard{}
	for _, s := range refused {
		if err := g.CheckAddr(netip.MustParseAddr(s)); err == nil {
			t.Errorf("CheckAddr(%s) = nil, want a refusal", s)
		}
		if err := (webhooks.Guard{AllowPrivate: true}).CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("AllowPrivate: CheckAddr(%s) = %v", s, err)
		}
	}
	for _, s := range allowed {
		if err := g.CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want nil", s, err)
		}
	}
}

func TestGuardURL(t *testing.T) {
	g := webhooks.Guard{}
	bad := []string{
		"", "ftp://example.com/", "example.com/hook", "http://", "http://user:pw@example.com/",
		"http://127.0.0.1:8080/", "http://[::1]/", "http://localhost/", "http://a.localhost./",
		"http://169.254.169.254/latest/meta-data", "https://example.com/#frag", "http://10.1.2.3/",
	}
	for _, u := range bad {
		if err := g.CheckURL(u); err == nil {
			t.Errorf("CheckURL(%q) = nil, want a refusal", u)
		}
	}
	for _, u := range []string{"https://example.com/hooks?token=x", "http://203.0.114.9:8080/"} {
		if err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v", u, err)
		}
	}
	long := "https://example.com/" + string(make([]byte, webhooks.MaxURL))
	if err := g.CheckURL(long); err == nil {
		t.Error("CheckURL(too long) = nil")
	}
}
