package combine

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"scout/patterns"
)

// maxProfileRows is the number of rows the page's time profile shows
// at most: beyond it, consecutive locations are grouped.
const maxProfileRows = 128

// jsProfile is the time profile as the page's script reads it.
type jsProfile struct {
	Width float64 `json:"width"` // seconds per bin
	Bins  int     `json:"bins"`
	// Activities name the activities, in the order of the values.
	Activities []string `json:"activities"`
	// Totals are the seconds of each activity per bin, summed over all
	// locations (f64, bin-major: Bins × len(Activities)).
	Totals string `json:"totals"`
	// Locations is the number of locations with a timeline, the
	// denominator of the totals' shares.
	Locations int `json:"locations"`
	// Group is the number of consecutive locations per row (1: one
	// location per row); Rows labels the rows.
	Group int      `json:"group"`
	Rows  []string `json:"rows"`
	// Sizes are the rows' numbers of locations.
	Sizes []int `json:"sizes"`
	// Shares are the rows' shares of each activity per bin, in
	// 1/255ths of the time of the row's locations (u8, row-major, then
	// bin, then activity).
	Shares string `json:"shares"`
}

// profileData lays out a report's time profile for the page; labels
// name the rows of tp (Report.Results), nil rows are left out. It
// returns nil without a profile.
func profileData(tp *TimeProfile, labels []string) *jsProfile {
	if tp == nil || tp.Bins == 0 {
		return nil
	}
	p := &jsProfile{Width: tp.Width, Bins: tp.Bins, Group: 1}
	for a := range patterns.NumActivities {
		p.Activities = append(p.Activities, a.String())
	}
	na := int(patterns.NumActivities)
	totals := make([]float64, tp.Bins*na)
	var rows []int // the locations with a timeline
	for i, row := range tp.Rows {
		if row == nil {
			continue
		}
		rows = append(rows, i)
		for k, bin := range row {
			for a, v := range bin {
				totals[k*na+a] += v
			}
		}
	}
	p.Totals, p.Locations = b64f64(totals), len(rows)
	if len(rows) > maxProfileRows {
		p.Group = (len(rows) + maxProfileRows - 1) / maxProfileRows
	}
	shares := make([]byte, 0, (len(rows)+p.Group-1)/p.Group*tp.Bins*na)
	sum := make([]float64, tp.Bins*na)
	for lo := 0; lo < len(rows); lo += p.Group {
		group := rows[lo:min(lo+p.Group, len(rows))]
		clear(sum)
		for _, i := range group {
			for k, bin := range tp.Rows[i] {
				for a, v := range bin {
					sum[k*na+a] += v
				}
			}
		}
		span := float64(len(group)) * tp.Width
		for _, v := range sum {
			shares = append(shares, byte(math.Round(255*min(max(v/span, 0), 1))))
		}
		label := labels[group[0]]
		if len(group) > 1 {
			label += "–" + labels[group[len(group)-1]]
		}
		p.Rows = append(p.Rows, label)
		p.Sizes = append(p.Sizes, len(group))
	}
	p.Shares = base64.StdEncoding.EncodeToString(shares)
	return p
}

// size is roughly what the profile takes in the page.
func (p *jsProfile) size() int {
	n := len(p.Totals) + len(p.Shares) + 100
	for _, r := range p.Rows {
		n += len(r) + 8
	}
	return n
}

// profileNote is the page's note on a grouped profile.
func (p *jsProfile) note() string {
	if p.Group == 1 {
		return ""
	}
	return fmt.Sprintf("The time profile groups the %d locations in %d rows of up to %s consecutive locations.", p.Locations, len(p.Rows), strconv.Itoa(p.Group))
}
