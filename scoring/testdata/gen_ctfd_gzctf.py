# Generates ctf_vectors.txt lines for CTFd and GZCTF, evaluating the
# published formulas as their originals do (CTFd: Python; GZCTF: C# double
# arithmetic, which Python's float and libm exp reproduce). Run:
#   python3 gen_ctfd_gzctf.py > ctf_python.txt
import math

def ctfd_linear(initial, minimum, decay, solves):
    if solves != 0:
        solves -= 1
    value = initial - (decay * solves)
    value = math.ceil(value)
    return max(value, minimum) if value < minimum else value

def ctfd_log(initial, minimum, decay, solves):
    if solves != 0:
        solves -= 1
    if decay == 0:
        decay = 1
    value = (((minimum - initial) / (decay ** 2)) * (solves ** 2)) + initial
    value = math.ceil(value)
    return minimum if value < minimum else value

def gzctf(original, rate, difficulty, n):
    if n <= 1:
        return original
    return int(math.floor(original * (rate + (1.0 - rate) * math.exp((1 - n) / difficulty))))

for initial in (500, 1000, 437, 999):
    for minimum in (0, 37, 100):
        for decay in (0, 1, 3, 7, 10, 15, 25, 100):
            for s in range(0, 61):
                print("ctfd_linear", initial, minimum, decay, s, ctfd_linear(initial, minimum, decay, s))
                print("ctfd_logarithmic", initial, minimum, decay, s, ctfd_log(initial, minimum, decay, s))
for original in (1000, 500, 300, 137):
    for rate in (0.25, 0.1, 0.0, 0.5, 0.33):
        for difficulty in (5.0, 3.0, 10.0, 1.5, 20.0):
            for n in range(0, 81):
                print("gzctf", original, repr(rate), repr(difficulty), n, gzctf(original, rate, difficulty, n))
