"""95% confidence intervals of a mean over seeds (Student's t), shared by aggregate.py and the
docs' renderer. Standard library only."""

# Student's t, 0.975 quantile, for 1..30 degrees of freedom
T975 = [12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423]


def t975(dof):
    """The 0.975 quantile of Student's t with dof degrees of freedom (beyond 30: the
    Cornish-Fisher expansion around the normal's 1.959964, within 1e-4)."""
    if dof < 1:
        return float("nan")
    if dof <= len(T975):
        return T975[dof - 1]
    z = 1.959964
    return (z + (z ** 3 + z) / (4 * dof) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * dof ** 2) +
            (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * dof ** 3))


def interval(values):
    """(n, mean, sample standard deviation, half-width of the 95% interval of the mean) of the
    values that are numbers; the last two are nan below two values."""
    v = [float(x) for x in values if x == x]
    n = len(v)
    if n == 0:
        return 0, float("nan"), float("nan"), float("nan")
    mean = sum(v) / n
    if n < 2:
        return n, mean, float("nan"), float("nan")
    sd = (sum((x - mean) ** 2 for x in v) / (n - 1)) ** 0.5
    return n, mean, sd, t975(n - 1) * sd / n ** 0.5
