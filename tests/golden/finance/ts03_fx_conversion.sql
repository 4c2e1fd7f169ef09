-- ledgerflow 0.1.0: project ts03_fx_conversion (id 0b000000-0000-4000-8000-000000000003, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)
--   ds_exchange_rates <- dataset exchange_rates (bitemporal, latest active version)

-- lf_stage_1: operations input, 1; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_join_fx` AS (
  SELECT
    `from_currency` AS `fx__from_currency`,
    `to_currency` AS `fx__to_currency`,
    `rate` AS `fx__rate`,
    `rate_type` AS `fx__rate_type`,
    `_period_from` AS `fx___period_from`,
    `_period_to` AS `fx___period_to`,
    COUNT(*) OVER (PARTITION BY `from_currency`) AS `fx___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `from_currency`,
      `to_currency`,
      `rate`,
      `rate_type`,
      `_period_from`,
      `_period_to`
    FROM `ds_exchange_rates`
    WHERE
      NOT `_deleted`
      AND `_period_from` <= :period_start
      AND (
        `_period_to` IS NULL OR `_period_to` > :period_start
      )
      AND `to_currency` = 'USD'
      AND `rate_type` = 'closing'
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `transactions`.`journal_id`,
    `transactions`.`line_number`,
    `transactions`.`posting_date`,
    `transactions`.`account_code`,
    `transactions`.`cost_center_code`,
    `transactions`.`currency`,
    `transactions`.`amount_local`,
    CASE
      WHEN NOT `transactions`.`_deleted`
      THEN CAST(`transactions`.`amount_local` * `fx`.`fx__rate` AS DECIMAL(18, 2))
      ELSE `transactions`.`amount_reporting`
    END AS `amount_reporting`,
    `transactions`.`description`,
    `transactions`.`source_system`,
    `transactions`.`_row_id`,
    `transactions`.`_deleted`,
    CASE
      WHEN NOT `transactions`.`_deleted`
      THEN :run_started_at
      ELSE `transactions`.`_updated_at`
    END AS `_updated_at`,
    `transactions`.`_period`,
    `transactions`.`_labels`,
    `transactions`.`_source_dataset`,
    `transactions`.`_operation_seq`,
    `transactions`.`_lf_origin`,
    `transactions`.`_lf_deleted_by`,
    CAST(`transactions`.`amount_reporting` AS DECIMAL(18, 2)) AS `_lf_before_1_amount_reporting`
  FROM `input` AS `transactions`
  LEFT JOIN `op_001_join_fx` AS `fx`
    ON `transactions`.`currency` = `fx`.`fx__from_currency`
    AND NOT `transactions`.`_deleted`
  WHERE
    (
      COALESCE(`fx`.`fx___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'fx\' of operation 1 matched ',
          CAST(`fx`.`fx___lf_matches` AS STRING),
          ' rows of dataset \'exchange_rates\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`transactions`.`currency` AS STRING))
        )
      )
    )
)
SELECT
  *
FROM `op_001_update`;

-- output_002: operation 2 'Write converted lines' writes table ts03_fx_converted
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

