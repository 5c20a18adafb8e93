/** What a TokenReview says about a bearer token (authentication.k8s.io/v1 TokenReviewStatus, the fields read). */
export interface TokenReviewResult {
  authenticated?: boolean;
  /** The audiences asked for that the token is valid for (empty or absent: none of them). */
  audiences?: string[];
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

/** The user a TokenReview accepted, as a SubjectAccessReview names it again. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A SubjectAccessReview's non-resource attributes (a URL such as `/admin/controllers`). */
export interface NonResourceAttributes {
  path: string;
  verb: string;
}

/** A SubjectAccessReview's resource attributes: an object, or all of a kind in a namespace without `name`. */
export interface ResourceAttributes {
  group: string;
  resource: string;
  verb: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** A SubjectAccessReview's question (authorization.k8s.io/v1 spec, the fields sent): one kind of attributes. */
export type AccessQuestion = {
  user: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
} & (
  | { nonResourceAttributes: NonResourceAttributes; resourceAttributes?: never }
  | { resourceAttributes: ResourceAttributes; nonResourceAttributes?: never }
);

/**
 * The two reviews the admin guard asks the management cluster for. An interface rather than a client so this library
 * depends on no Kubernetes client: the services pass one over their own (libs/provider-kit), tests over client-node.
 */
export interface AccessReviews {
  /** A TokenReview asking whether `token` is valid for any of `audiences`. */
  reviewToken(token: string, audiences: string[]): Promise<TokenReviewResult | undefined>;
  reviewAccess(question: AccessQuestion): Promise<{ allowed?: boolean } | undefined>;
}

/** The Nest injection token of the AccessReviews the admin guard uses. */
export const ACCESS_REVIEWS = Symbol('ACCESS_REVIEWS');
