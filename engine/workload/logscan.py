"""Compiled byte-level passes over accounting logs: a PBS log (the fast path of
engine.workload.pbs) and a sacct dump's field counts (:func:`separators_per_line`).

A PBS log is read as bytes (latin-1: one byte, one character, as the text reader decodes it) and
these numba kernels do what the per-line Python reader did for the common records, without a
Python object per line or per attribute:

* :func:`split_lines`: line spans, ending at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (Python's
  universal newlines, so line numbers are the text reader's);
* :func:`classify`: the quick ``S``/``E``/``Q`` records with a plain numeric job id (ASCII digits,
  no leading zero, at most 18 of them), and the lines read past (comments, blank lines, well-formed
  records of other types) -- every other line is left to the Python reader;
* :func:`attribute_spans`: where each used attribute's value lies in an ``E`` record's message (the
  last ``key=`` wins, as in a dict; a balanced quoted value without its quotes), and whether the
  message needs the careful reader (a value that opens a quote it does not close);
* :func:`factorize`: one code per distinct value of one attribute (so Python makes one string per
  distinct value), and :func:`plain_numbers`: values of 1-18 ASCII digits as integers.

Whatever these kernels leave out goes through the Python reader, which stays the reference: tests
read the same logs both ways and compare every job, error and count.
"""

from __future__ import annotations

import numpy as np

from engine.jit import njit   # numba at a kernel's first call, its cached code loaded without the compiler's set-up

#: characters Python's ``str.split()`` splits on, among the 256 a latin-1 byte can be
WHITESPACE = np.array([chr(b).isspace() for b in range(256)], dtype=np.bool_)
#: bytes ``bytes.strip()`` removes
BYTE_SPACE = np.array([bytes([b]).isspace() for b in range(256)], dtype=np.bool_)
SLOW, QUEUED, STARTED, ENDED, READ_PAST = 0, 1, 2, 3, 4


@njit(cache=True)
def split_lines(buf):
    """(start, end, terminated) of every line; ``end`` excludes the line break."""
    n = len(buf)
    most = 1
    for i in range(n):                          # at most one line per break byte, plus the last
        most += (buf[i] == 10) | (buf[i] == 13)
    starts = np.empty(most, np.int64)
    ends = np.empty(most, np.int64)
    terminated = np.ones(most, np.bool_)
    line = 0
    begin = 0
    i = 0
    while i < n:
        c = buf[i]
        if c == 10 or c == 13:
            starts[line] = begin
            ends[line] = i
            line += 1
            if c == 13 and i + 1 < n and buf[i + 1] == 10:
                i += 1
            begin = i + 1
        i += 1
    if begin < n:
        starts[line] = begin
        ends[line] = n
        terminated[line] = False
        line += 1
    return starts[:line].copy(), ends[:line].copy(), terminated[:line].copy()


@njit(cache=True)
def classify(buf, starts, ends, whitespace):
    """Per line: QUEUED/STARTED/ENDED for a quick record with a plain numeric job id, READ_PAST for a
    comment, a blank line or a well-formed record of another type than Q/S/E/R/D/A/T (else SLOW),
    the job id as a number, and where the message begins."""
    total = len(starts)
    kind = np.zeros(total, np.uint8)
    key = np.full(total, -1, np.int64)
    message = np.full(total, -1, np.int64)
    for line in range(total):
        s = starts[line]
        e = ends[line]
        if e == s or buf[s] == 59:
            kind[line] = READ_PAST                       # a comment (or blank: below)
            continue
        blank = True
        for j in range(s, e):
            if not whitespace[buf[j]]:
                blank = False
                break
        if blank:
            kind[line] = READ_PAST
            continue
        if e - s < 23 or buf[s + 19] != 59 or buf[s + 2] != 47 or buf[s + 5] != 47 or buf[s + 21] != 59:
            continue
        # the date field must hold no ';' (it is exactly 19 characters before the first ';')
        clean = True
        for j in range(s, s + 19):
            if buf[j] == 59:
                clean = False
                break
        code = buf[s + 20]
        if code == 81:
            k = QUEUED
        elif code == 83:
            k = STARTED
        elif code == 69:
            k = ENDED
        elif buf[s + 10] == 32 and ((65 <= code <= 90) or (97 <= code <= 122)) and code not in (68, 65, 82, 84):
            # another record type (licences, reservations, ...): read past once its three ';' are there
            semicolons = 0
            for j in range(s + 22, e):
                if buf[j] == 59:
                    semicolons = 1
                    break
            if semicolons and clean:
                kind[line] = READ_PAST
            continue
        else:
            continue
        if not clean:
            continue
        j = s + 22
        digits = 0
        value = 0
        plain = True
        while j < e and buf[j] != 46 and buf[j] != 59:
            c = buf[j]
            if c < 48 or c > 57:
                plain = False
                break
            value = value * 10 + (c - 48)
            digits += 1
            j += 1
            if digits > 18:
                plain = False
                break
        if not plain or digits == 0 or (digits > 1 and buf[s + 22] == 48):
            continue
        # the job id runs to the third ';'
        while j < e and buf[j] != 59:
            j += 1
        if j >= e:
            continue
        kind[line] = k
        key[line] = value
        message[line] = j + 1
    return kind, key, message


@njit(cache=True)
def attribute_spans(buf, begins, ends, names, name_starts, whitespace):
    """For each message ``buf[begins[i]:ends[i]]``: the value span of every name k (``spans[0, k, i]``
    to ``spans[1, k, i]``, -1 when absent) and whether the careful reader must read it (a value
    opening a quote it does not close)."""
    count = len(begins)
    keys = len(name_starts) - 1
    spans = np.full((2, keys, count), -1, np.int64)
    lengths = name_starts[1:] - name_starts[:-1]
    by_length_keys = np.argsort(lengths, kind="mergesort")      # the names of each length, for a quick look-up
    by_length = np.zeros(lengths.max() + 2, np.int64)
    for k in range(keys):
        by_length[lengths[k] + 1] += 1
    by_length = np.cumsum(by_length)
    careful = np.zeros(count, np.bool_)
    for i in range(count):
        b = begins[i]
        e = ends[i]
        j = b
        while j < e:
            while j < e and whitespace[buf[j]]:
                j += 1
            if j >= e:
                break
            t = j
            equal = -1
            while j < e and not whitespace[buf[j]]:
                if equal < 0 and buf[j] == 61:
                    equal = j
                j += 1
            if equal < 0:
                continue
            v0 = equal + 1
            v1 = j
            if v1 > v0 and (buf[v0] == 34 or buf[v0] == 39):     # (so the message holds a quote)
                if v1 - v0 < 2 or buf[v1 - 1] != buf[v0]:
                    careful[i] = True
                    break
                v0 += 1
                v1 -= 1
            length = equal - t
            if length >= len(by_length) - 1:
                continue
            for k in by_length_keys[by_length[length]:by_length[length + 1]]:
                n0 = name_starts[k]
                same = True
                for m in range(length):
                    if buf[t + m] != names[n0 + m]:
                        same = False
                        break
                if same:
                    spans[0, k, i] = v0
                    spans[1, k, i] = v1
                    break
    return spans, careful


@njit(cache=True)
def factorize(buf, begins, ends):
    """A code per value span (-1 where ``begins`` is -1): equal bytes, equal code; and the first
    span of each code."""
    count = len(begins)
    codes = np.full(count, -1, np.int64)
    size = 1024
    while size < 2 * count:
        size *= 2
    table = np.full(size, -1, np.int64)
    first = np.empty(count, np.int64)
    distinct = 0
    for i in range(count):
        b = begins[i]
        if b < 0:
            continue
        e = ends[i]
        if i > 0 and codes[i - 1] >= 0 and ends[i - 1] - begins[i - 1] == e - b:
            p = begins[i - 1]
            same = True
            for m in range(e - b):
                if buf[p + m] != buf[b + m]:
                    same = False
                    break
            if same:                                # runs of one value: no hashing
                codes[i] = codes[i - 1]
                continue
        h = np.uint64(14695981039346656037)
        for j in range(b, e):
            h = (h ^ np.uint64(buf[j])) * np.uint64(1099511628211)
        slot = np.int64(h & np.uint64(size - 1))
        while True:
            code = table[slot]
            if code < 0:
                table[slot] = distinct
                first[distinct] = i
                codes[i] = distinct
                distinct += 1
                break
            r = first[code]
            rb = begins[r]
            re_ = ends[r]
            if re_ - rb == e - b:
                same = True
                for m in range(e - b):
                    if buf[rb + m] != buf[b + m]:
                        same = False
                        break
                if same:
                    codes[i] = code
                    break
            slot = (slot + 1) & (size - 1)
    return codes, first[:distinct].copy()


@njit(cache=True)
def plain_numbers(buf, begins, ends):
    """Values of 1-18 ASCII digits as integers (ok), else -1 (not ok)."""
    count = len(begins)
    values = np.full(count, -1, np.int64)
    ok = np.zeros(count, np.bool_)
    for i in range(count):
        b = begins[i]
        e = ends[i]
        if b < 0 or e - b < 1 or e - b > 18:
            continue
        value = 0
        plain = True
        for j in range(b, e):
            c = buf[j]
            if c < 48 or c > 57:
                plain = False
                break
            value = value * 10 + (c - 48)
        if plain:
            values[i] = value
            ok[i] = True
    return values, ok


@njit(cache=True)
def separators_per_line(buf, separator, space):
    """Per line (split at ``\n``, as a binary stream reads it): how many ``separator`` bytes it
    holds, and whether it holds anything but ``space`` bytes (``bytes.strip()``'s)."""
    n = len(buf)
    most = 1
    for i in range(n):
        most += buf[i] == 10
    counts = np.zeros(most, np.int64)
    filled = np.zeros(most, np.bool_)
    line = 0
    for i in range(n):
        c = buf[i]
        if c == separator:
            counts[line] += 1
        if not space[c]:
            filled[line] = True
        if c == 10:
            line += 1
    lines = line + 1 if n and buf[n - 1] != 10 else line
    return counts[:lines].copy(), filled[:lines].copy()
