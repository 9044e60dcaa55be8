package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// ExportOptions select what an export writes.
type ExportOptions struct {
	Format        string // csv (default) or jsonl
	Period        string // a period id, current (default) or previous
	IncludeHidden bool   // admin keys only
	View          string // contests: public (default) or live
}

// ExportBoard streams a board's period to w in rank order. consistent is
// false when the board took writes during the export, so that entries may
// have moved between the chunks the server read (the server's
// Podium-Export-Consistent trailer). It is not retried once the answer
// has started.
func (c *Client) ExportBoard(ctx context.Context, board string, o ExportOptions, w io.Writer) (consistent bool, err error) {
	return c.export(ctx, path("boards", board, "export"), o, w, true)
}

// ExportContest streams a contest's standings to w (always consistent).
func (c *Client) ExportContest(ctx context.Context, contest string, o ExportOptions, w io.Writer) error {
	_, err := c.export(ctx, path("contests", contest, "export"), o, w, false)
	return err
}

func (c *Client) export(ctx context.Context, p string, o ExportOptions, w io.Writer, board bool) (bool, error) {
	v := url.Values{}
	if o.Format != "" {
		v.Set("format", o.Format)
	}
	if o.Period != "" && board {
		v.Set("period", o.Period)
	}
	if o.View != "" && !board {
		v.Set("view", o.View)
	}
	if o.IncludeHidden {
		v.Set("include_hidden", "true")
	}
	u := c.base + p
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.ua != "" {
		hr.Header.Set("User-Agent", c.ua)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		return false, answerError(resp, b)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return false, fmt.Errorf("podium: export %s: %w", p, err)
	}
	return !board || resp.Trailer.Get("Podium-Export-Consistent") == "true", nil
}
