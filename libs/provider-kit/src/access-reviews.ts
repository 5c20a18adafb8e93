import type { KubeClient } from '@capstan/kube';
import type { AccessQuestion, AccessReviews, TokenReviewResult } from '@capstan/observability';

/** The admin API's TokenReviews and SubjectAccessReviews (route and object), sent through the service's own client. */
export function kubeAccessReviews(client: KubeClient): AccessReviews {
  return {
    async reviewToken(token: string, audiences: string[]) {
      const review = await client.request<{ status?: TokenReviewResult }>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences } },
      });
      return review.status;
    },
    async reviewAccess(spec: AccessQuestion) {
      const review = await client.request<{ status?: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
      });
      return review.status;
    },
  };
}
