package podium

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

// PeriodAll is the id of the single period of a board that never resets.
const PeriodAll = "all"

// Period is one ranking window of a board: [Start, End). A board without
// resets has the single period "all" with zero Start and End.
type Period struct {
	ID    string
	Start time.Time
	End   time.Time // zero when the board never resets
}

var zones sync.Map // name -> *time.Location

// LoadZone loads an IANA zone, caching it. An unknown zone is ECodeInvalid.
func LoadZone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, Errorf(ECodeInvalid, "reset.tz %q is not an IANA time zone", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// PeriodAt returns the period of a board with reset r that contains t.
// Days start at 00:00 in the zone, ISO weeks on Monday 00:00, months on the
// first at 00:00.
func PeriodAt(r Reset, t time.Time) Period {
	if r.Every == Never || r.Every == "" {
		return Period{ID: PeriodAll}
	}
	loc, err := LoadZone(r.TZ)
	if err != nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	y, m, d := lt.Date()
	switch r.Every {
	case Daily:
		start := time.Date(y, m, d, 0, 0, 0, 0, loc)
		return Period{ID: start.Format("2006-01-02"), Start: start, End: time.Date(y, m, d+1, 0, 0, 0, 0, loc)}
	case Weekly:
		wd := (int(lt.Weekday()) + 6) % 7 // Monday = 0
		start := time.Date(y, m, d-wd, 0, 0, 0, 0, loc)
		iy, iw := start.ISOWeek()
		return Period{ID: fmt.Sprintf("%04d-W%02d", iy, iw), Start: start, End: time.Date(y, m, d-wd+7, 0, 0, 0, 0, loc)}
	default: // Monthly
		start := time.Date(y, m, 1, 0, 0, 0, 0, loc)
		return Period{ID: start.Format("2006-01"), Start: start, End: time.Date(y, m+1, 1, 0, 0, 0, 0, loc)}
	}
}

// PreviousPeriod returns the period just before p for reset r. For a board
// that never resets it returns false.
func PreviousPeriod(r Reset, p Period) (Period, bool) {
	if p.ID == PeriodAll {
		return Period{}, false
	}
	return PeriodAt(r, p.Start.Add(-time.Nanosecond)), true
}

// ValidPeriodID reports whether id is a well-formed period id for reset r:
// "all", "2026-11-30", "2026-W48" or "2026-11".
func ValidPeriodID(r Reset, id string) bool {
	switch r.Every {
	case Never, "":
		return id == PeriodAll
	case Daily:
		_, err := time.Parse("2006-01-02", id)
		return err == nil
	case Weekly:
		if len(id) != 8 || id[4] != '-' || id[5] != 'W' {
			return false
		}
		y, err1 := strconv.Atoi(id[:4])
		w, err2 := strconv.Atoi(id[6:])
		return err1 == nil && err2 == nil && y > 0 && w >= 1 && w <= 53
	case Monthly:
		_, err := time.Parse("2006-01", id)
		return err == nil
	}
	return false
}
