/** What a TokenReview says about a bearer token (authentication.k8s.io/v1 TokenReviewStatus, the fields read). */
export interface TokenReviewResult {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

/** A SubjectAccessReview's question about a non-resource URL (authorization.k8s.io/v1, the fields sent). */
export interface NonResourceAccessQuestion {
  user: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  nonResourceAttributes: { path: string; verb: string };
}

/**
 * The two reviews the admin guard asks the management cluster for. An interface rather than a client so this library
 * depends on no Kubernetes client: the services pass one over their own (libs/provider-kit), tests over client-node.
 */
export interface AccessReviews {
  reviewToken(token: string): Promise<TokenReviewResult | undefined>;
  reviewAccess(question: NonResourceAccessQuestion): Promise<{ allowed?: boolean } | undefined>;
}

/** The Nest injection token of the AccessReviews the admin guard uses. */
export const ACCESS_REVIEWS = Symbol('ACCESS_REVIEWS');
