#!/usr/bin/env python3
"""Prints the catalogue table of data/hardware/README.md from the preset files.

Usage: tools/hardware_catalog_table.py [DATA_DIR]   (default: data/hardware next to this tool)
Columns: id, kind (silicon or the preset an instance shape is built on), date of the compute
figures, calibration (own fitted efficiency block, else the preset borrowed from), on-demand and
reserved/spot price per GPU-hour with their month, and the first clause of the source.
"""
import json
import os
import sys


def short(text, n=70):
    text = text.split(';')[0].strip().replace('|', '/')
    return text if len(text) <= n else text[:n - 1].rstrip() + '…'


def price(j, key, date_key):
    v = j.get(key)
    if v is None:
        return 'null (no source found)'
    return f"{v:.2f} ({j.get(date_key) or '?'})"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', 'data', 'hardware')
    print('| id | kind | date | calibrated | on-demand $/GPU-h | reserved/spot $/GPU-h | source |')
    print('|---|---|---|---|---|---|---|')
    for name in sorted(os.listdir(root)):
        if not name.endswith('.json'):
            continue
        with open(os.path.join(root, name)) as f:
            j = json.load(f)
        eff = j.get('efficiency') or {}
        if eff.get('fitted_date'):
            cal = f"yes ({eff['fitted_date']})"
        elif j.get('efficiency_from'):
            cal = f"no (from {j['efficiency_from']})"
        elif eff and j.get('efficiency_measured'):
            cal = 'no (measured)'
        else:
            cal = 'no (nominal)'
        kind = f"shape of {j['instance_of']}" if j.get('instance_of') else 'silicon'
        print(f"| {j['id']} | {kind} | {j.get('source_date') or '?'} | {cal} | "
              f"{price(j, 'price_usd_per_gpu_hour', 'price_date')} | "
              f"{price(j, 'price_reserved_usd_per_gpu_hour', 'price_reserved_date')} | "
              f"{short(j.get('source', ''))} |")


if __name__ == '__main__':
    main()
