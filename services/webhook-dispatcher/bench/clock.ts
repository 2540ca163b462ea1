/**
 * The clock every process of the benchmark stamps with (epoch ms, sub-millisecond): the
 * publisher's publish times and the receiver's arrival times are subtracted from each other.
 */
export const epochMs = () => performance.timeOrigin + performance.now();
