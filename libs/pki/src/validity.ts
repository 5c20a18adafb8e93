export const ONE_DAY_MS = 24 * 60 * 60 * 1000;

/** CAs live ten years, as kubeadm's and K3s's do; they are not renewed automatically. */
export const CA_VALIDITY_MS = 3650 * ONE_DAY_MS;

/** Leaf certificates live one year, as K3s's client and server certificates do. */
export const LEAF_VALIDITY_MS = 365 * ONE_DAY_MS;

/** Certificates start a little in the past so a host whose clock lags the issuer still accepts them. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;
