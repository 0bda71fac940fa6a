"""Merging kernel records into data/kernel_benchmarks.json (shared by the record scripts)."""
import json


def merge_records(path, records):
    """Replace the records of the same ids in the file at `path` and add the new ones."""
    with open(path) as f:
        data = json.load(f)
    ids = {r["id"] for r in records}
    data["records"] = [r for r in data["records"] if r["id"] not in ids] + records
    with open(path, "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
